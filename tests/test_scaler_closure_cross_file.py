"""The GradScaler protocol through a closure a factory of another package returns
(scaler_summaries.py, the "closure" calls; facts/returned_closures.py `factory_call`).

tests/projects/scaler_torchtune_closure: pytorch/torchtune layout (recipes/lora_finetune_single_device.py
`LoRAFinetuneRecipeSingleDevice.setup/train`, torchtune/training/ helpers re-exported by
torchtune/training/__init__.py) in a fork that trains in float16 with a GradScaler and builds its
optimizer step as a closure: `make_step_fn(optimizer, grad_scaler, model, clip_norm)` in
torchtune/training/_steps.py returns `step_fn()`, which unscales, clips, steps and updates
through the scaler and optimizer it closed over. The recipe keeps it as `self._step_fn` (set in
`setup`, called in `train`) and unscales the same optimizer itself first to log the gradient
norm: the closure's `unscale_` is the second one (AMP123 at the call). The closure's free names
stand for what the factory call passed, as they do when the factory is in the same file.

Twins: the recipe leaves the unscale to the closure; the factory makes a scaler of its own; the
attribute is written twice (which closure runs is not known); the factory hands a different
optimizer than the recipe unscales.
"""

from __future__ import annotations

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "scaler_torchtune_closure"
FINDING = ("recipes/lora_finetune_single_device.py", 29, "AMP123")
OWN_UNSCALE = "                self._grad_scaler.unscale_(self._optimizer)\n"


def amp123(files):
    return code_findings(files, "AMP123")


def test_closure_held_on_self_unscales_the_recipes_optimizer_again():
    assert amp123(load(NAME))[0] == [FINDING]


def test_a_local_closure_from_an_imported_factory():
    edits = (
        ("from torchtune import training\n", "from torchtune import training\n"
                                             "from torchtune.training import make_step_fn\n"),
        ("        self._step_fn = training.make_step_fn(", "        step_fn = make_step_fn("),
        ("    def train(self):\n", "    def train(self):\n        step_fn = make_step_fn("
                                   "self._optimizer, self._grad_scaler, self._model)\n"),
        ("                self._step_fn()\n", "                step_fn()\n"),
    )
    files = load(NAME, edits)
    assert amp123(files)[0] == [("recipes/lora_finetune_single_device.py", 31, "AMP123")]


def test_twin_recipe_leaves_the_unscale_to_the_closure_is_silent():
    files = load(NAME, ((OWN_UNSCALE, ""),))
    assert amp123(files)[0] == []


def test_twin_the_factory_makes_its_own_scaler_is_silent():
    files = load(NAME, (("    params = [p", "    grad_scaler = torch.amp.GradScaler(\"cuda\")\n    params = [p"),))
    assert amp123(files)[0] == []


def test_twin_attribute_written_twice_is_not_guessed():
    files = load(NAME, (("        self._accum = cfg.gradient_accumulation_steps\n",
                         "        self._accum = cfg.gradient_accumulation_steps\n"
                         "        self._step_fn = None\n"),))
    assert amp123(files)[0] == []


def test_twin_the_closure_steps_another_optimizer_is_silent():
    files = load(NAME, (("training.make_step_fn(self._optimizer,", "training.make_step_fn(self._head_optimizer,"),))
    assert amp123(files)[0] == []


def test_a_local_of_another_method_is_not_the_same_object():
    files = load(NAME, (("training.make_step_fn(self._optimizer,", "training.make_step_fn(optimizer,"),
                        ("        self._grad_scaler = torch", "        optimizer = self._optimizer\n"
                                                            "        self._grad_scaler = torch")))
    assert amp123(files)[0] == []


def test_warm_run_follows_an_edit_of_the_factory(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "torchtune/training/_steps.py",
        (("        grad_scaler.unscale_(optimizer)\n", ""),), "AMP123", [FINDING])
