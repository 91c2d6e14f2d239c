"""The GradScaler protocol through a method of the object an attribute holds: `self.a.m()` runs
`m` of the one project class the class flow finds in `self.a`, whose `self` is the caller's
`self.a` (scaler_summaries "held" calls, scaler_remote `inherited_scalers`).

tests/projects/scaler_dle_executor: NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets
layout (main.py, image_classification/training.py `Trainer.train_step`, the `Executor` moved into
image_classification/executor.py in this fork): `Trainer.train_step` calls
`self.executor.forward_backward(...)`, whose backward is not scaled, then steps
`self.executor.scaler`: AMP122 at the call, naming executor.py:26. Twins: the executor scales its
loss (silent); the trainer holds an object of one of two classes (which `forward_backward` runs
is not known: silent).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_dle_executor"
EXECUTOR = f"{NAME}/image_classification/executor.py"
SCALED = (("        loss.backward()\n", "        self.scaler.scale(loss).backward()\n"),)


def test_a_method_of_the_object_an_attribute_holds_is_composed():
    found, results = code_findings(load(NAME), "AMP122")
    assert found == [("image_classification/training.py", 14, "AMP122")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP122"]
    assert diag.message.startswith(
        "backward of an unscaled loss (at image_classification/executor.py:26, through this call), "
        "but `self.executor.scaler.step` at line 18 steps the optimizer")
    assert diag.through == (EXECUTOR, 26)
    assert diag.fix is None  # the edit is in the other file


def test_the_twin_scaling_in_the_executor_is_silent():
    files = load(NAME, SCALED)
    assert "self.scaler.scale(loss).backward()" in files[EXECUTOR]
    assert code_findings(files, "AMP122")[0] == []


def test_an_attribute_that_may_hold_either_of_two_classes_is_not_composed():
    files = load(NAME)
    files[f"{NAME}/image_classification/executor.py"] += (
        "\n\nclass ScaledExecutor(Executor):\n"
        "    def forward_backward(self, input, target):\n"
        "        loss = self.loss(self.model(input), target)\n"
        "        self.scaler.scale(loss).backward()\n"
        "        return loss, None\n")
    files[f"{NAME}/main.py"] = files[f"{NAME}/main.py"].replace(
        "    executor = Executor(", "    executor = (ScaledExecutor if args.scaled else Executor)(").replace(
        "from image_classification.executor import Executor\n",
        "from image_classification.executor import Executor, ScaledExecutor\n")
    assert "ScaledExecutor if args.scaled" in files[f"{NAME}/main.py"]
    assert code_findings(files, "AMP122")[0] == []


def test_only_methods_of_a_scaler_helper_are_asked_of_the_class_flow(monkeypatch):
    # `self.meter.update(loss)`: AverageMeter's file clips gradients (a callee word) but never
    # speaks of a scaler, so the class flow is not asked what `self.meter` holds (its first
    # questions cost a flow index)
    from amplint.analysis.project.classflow import ClassFlow

    asked = []
    original = ClassFlow.call_targets

    def call_targets(self, path, key, receiver, attr):
        asked.append((key, receiver, attr))
        return original(self, path, key, receiver, attr)

    monkeypatch.setattr(ClassFlow, "call_targets", call_targets)
    files = load(NAME)
    files[f"{NAME}/image_classification/utils.py"] = (
        "import torch\n\n\ndef clip_gradients(model, max_norm):\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n\n\n"
        "class AverageMeter:\n"
        "    def __init__(self):\n        self.sum, self.count = 0.0, 0\n\n"
        "    def update(self, value, n=1):\n        self.sum += float(value) * n\n        self.count += n\n")
    training = f"{NAME}/image_classification/training.py"
    files[training] = files[training].replace(
        "from image_classification.executor import Executor\n",
        "from image_classification.executor import Executor\nfrom image_classification.utils import AverageMeter\n",
    ).replace("        self.steps_since_update = 0\n\n",
              "        self.steps_since_update = 0\n        self.meter = AverageMeter()\n\n", 1).replace(
        "        self.steps_since_update += 1\n",
        "        self.steps_since_update += 1\n        self.meter.update(loss)\n")
    assert "self.meter.update(loss)" in files[training]
    assert code_findings(files, "AMP122")[0] == [("image_classification/training.py", 16, "AMP122")]
    held = [(key, receiver, attr) for key, receiver, attr in asked if receiver[0] == "self"]
    assert ("Trainer.train_step", ("self", "executor"), "forward_backward") in held
    assert not any(receiver == ("self", "meter") for _key, receiver, _attr in held)
