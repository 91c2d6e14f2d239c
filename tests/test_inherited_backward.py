"""AMP104 and `self.backward(loss)` whose method a base class of another file defines
(project/backward_entries.py): the call of a backward API is reported by its name, unless the
method it runs, for the class and every project subclass, runs each of its backwards under an
autocast it disables itself.

tests/projects/inherit_classy_backward is laid out like facebookresearch/ClassyVision
(classy_vision/tasks/{classy_task,classification_task,fine_tuning_task}.py, classy_train.py):
`ClassificationTask.train_step` opens the autocast region and calls `self.backward(local_loss)`
inside it; `backward` is `ClassyTask`'s, in another file, and runs under
`torch.autocast("cuda", enabled=False)`. As committed the project is clean; the edits make the
hazard.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "inherit_classy_backward"
TASK = "classy_vision/tasks/classification_task.py"
CALL = (TASK, 12, "AMP104")
PROTECTED = ('        with torch.autocast("cuda", enabled=False):\n'
             "            self.amp_grad_scaler.scale(loss).backward()\n")
PLAIN = "        self.amp_grad_scaler.scale(loss).backward()\n"


def findings(*edits, files=None):
    return code_findings(files if files is not None else load(NAME, edits), "AMP104", SETTINGS)[0]


def test_a_backward_the_base_class_of_another_file_runs_in_float32_is_not_reported():
    assert findings() == []


def test_a_backward_the_base_class_runs_under_the_region_is_reported_at_the_call():
    assert findings((PROTECTED, PLAIN)) == [CALL]


def test_a_second_backward_outside_the_disabled_block_is_reported():
    assert findings((PROTECTED, PROTECTED + "        loss.backward()\n")) == [CALL]


def test_an_enabled_autocast_inside_the_disabled_one_is_reported():
    inner = PROTECTED.replace("            self.amp_grad_scaler",
                              '            with torch.autocast("cuda"):\n                self.amp_grad_scaler')
    # (the inner region is the base file's own: its backward is reported there too)
    assert findings((PROTECTED, inner)) == [CALL, ("classy_vision/tasks/classy_task.py", 19, "AMP104")]


def test_a_subclass_of_a_third_file_that_overrides_backward_is_reported():
    override = ("    def backward(self, loss):\n"
                "        self.amp_grad_scaler.scale(loss).backward()\n\n"
                "    def __init__(self, model, loss, optimizer, amp_enabled=False, freeze")
    assert findings(("    def __init__(self, model, loss, optimizer, amp_enabled=False, freeze", override)) == [CALL]


def test_a_base_outside_the_project_before_the_one_that_defines_it_is_reported():
    # the mixin of another package may define `backward` first: the flow cannot tell
    edits = ("class ClassificationTask(ClassyTask):", "class ClassificationTask(HookMixin, ClassyTask):"), (
        "from classy_vision.tasks.classy_task import ClassyTask\n",
        "from classy_vision.tasks.classy_task import ClassyTask\nfrom fvcore.hooks import HookMixin\n")
    assert findings(*edits) == [(TASK, 13, "AMP104")]


def test_a_method_without_a_backward_of_its_own_is_not_taken_to_protect():
    assert findings((PROTECTED, "        self.step_optimizer()\n")) == [CALL]


def _namespace_package(*edits):
    """The package linted as a folder without `__init__.py` files (a namespace package): the
    project's folder is classy_vision itself, and `classy_vision.tasks.classy_task` names its
    tasks/classy_task.py."""
    return {path: text for path, text in load(NAME, edits).items()
            if path.startswith(f"{NAME}/classy_vision/") and not path.endswith("__init__.py")}


def test_the_base_class_of_a_namespace_package_is_found():
    assert findings(files=_namespace_package()) == []


def test_a_helper_method_of_a_namespace_package_is_reached_through_the_subclass():
    files = _namespace_package((PROTECTED, PLAIN), ("def backward(self, loss)", "def run_backward(self, loss)"),
                               ("self.backward(local_loss)", "self.run_backward(local_loss)"))
    results = code_findings(files, "AMP104", SETTINGS)
    assert results[0] == [("classy_vision/tasks/classy_task.py", 17, "AMP104")]
    (message,) = [d.message for r in results[1].values() for d in r.diagnostics if d.code == "AMP104"]
    assert "called as self.run_backward at classification_task.py:12" in message
    assert "dispatched to ClassyTask in classy_task.py" in message


def _messages(*edits):
    from amplint.analysis.project import lint_project

    return [d.message for result in lint_project(load(NAME, edits), SETTINGS).values()
            for d in result.diagnostics if d.code == "AMP104"]


def test_the_finding_at_the_call_names_the_backward_the_inherited_method_runs():
    """ParlAI's TorchGeneratorAgent.train_step calling TorchAgent.backward of torch_agent.py (blind
    set D, parlai_inherited_backward): the finding sits at the call and names the other end."""
    assert _messages((PROTECTED, PLAIN)) == [
        "backward inside autocast (at classy_vision/tasks/classy_task.py:17, through this call; autocast at line 9): "
        "the AMP docs ask for backward after the `with` block (backward ops would run under autocast)"]
    # the first backward that runs outside the method's own disabled autocast
    assert "(at classy_vision/tasks/classy_task.py:19, through this call; autocast at line 9)" in \
        _messages((PROTECTED, PROTECTED + "        loss.backward()\n"))[0]
    # the base's backward for ClassificationTask, an override for FineTuningTask: no one other end
    override = ("    def backward(self, loss):\n"
                "        self.amp_grad_scaler.scale(loss).backward()\n\n"
                "    def __init__(self, model, loss, optimizer, amp_enabled=False, freeze")
    assert _messages((PROTECTED, PLAIN), ("    def __init__(self, model, loss, optimizer, amp_enabled=False, freeze",
                                          override)) == [
        "backward inside autocast (autocast at line 9): the AMP docs ask for backward after the `with` block "
        "(backward ops would run under autocast)"]
