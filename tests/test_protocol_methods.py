"""The GradScaler protocol split over the methods of one object (issue 26, round 43): a method
named `step` of a wrapper (`self.step()`, `wrapper.step()`, `self.optim.step()` of a held
wrapper, a `step` a mixin of another file defines) is composed with its events like any other
method of the object; it is taken for a plain optimizer's `step()` only when it has none. And
`tensor.backward(gradient)` is an unscaled backward when the function shows the receiver is a
tensor (it differentiates with respect to it, `autograd.grad(loss, [y])`, or makes the gradient
like it, `torch.ones_like(y)`): facts/gradient_backward.py.

tests/projects/protocol_onmt_optimizer is laid out like OpenNMT/OpenNMT-py (onmt/utils/
optimizers.py `Optimizer`, built by its `from_opt` classmethod, owning the GradScaler with
`backward(loss)` and `step()`; onmt/trainer.py `Trainer._gradient_accumulation` calling
`self.optim.backward(loss)` per batch and `self.optim.step()` after; onmt/train_single.py): a clip
in the trainer between the two clips scaled gradients (AMP120). Before, `self.optim.step()` was
a plain optimizer step: nothing was reported there across files, and in one file AMP127 said the
wrapper's step bypasses the scaler (false: it is the scaler's step).

tests/projects/protocol_gradcache_backward is laid out like luyug/GradCache (grad_cache/
grad_cache.py `GradCache.forward_backward`: the loss's gradient with respect to the
representations, then `reps.backward(grad)`; run_train.py stepping through a GradScaler).

Every hazard here was run on torch 2.13 CPU (GradScaler("cpu"), bfloat16 autocast): the
unscaled `reps.backward(grad)` makes `scaler.step` raise 'Attempted step but _scale is None';
`scaler.scale(reps).backward(grad)` steps; a norm clipped before `unscale_` is 65536 times the
unscaled one.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source

from project_files import code_findings, load

SETTINGS = Settings.default()
ONMT = "protocol_onmt_optimizer"
TRAINER = "onmt/trainer.py"
CLIP = "        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)\n"
CACHE = "protocol_gradcache_backward"


def protocol(files):
    return sorted(f for code in ("AMP120", "AMP121", "AMP122", "AMP123", "AMP126", "AMP127")
                  for f in code_findings(files, code, SETTINGS)[0])


def one_file(source):
    result = lint_source("probe.py", source, SETTINGS)
    return sorted((d.line, d.code) for d in result.diagnostics if d.code.startswith("AMP12"))


def test_clip_between_the_held_wrappers_backward_and_step_is_reported():
    found, results = code_findings(load(ONMT), "AMP120", SETTINGS)
    assert found == [(TRAINER, 31, "AMP120")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP120"]
    assert "`self.optim._scaler.step` at utils/optimizers.py:27, through the call at line 32" in diag.message


def test_the_twin_unscaling_through_the_wrapper_is_silent():
    files = load(ONMT, ((CLIP, "        self.optim.unscale_grads()\n" + CLIP),))
    assert protocol(files) == []


def test_the_twin_without_the_clip_is_silent():
    assert protocol(load(ONMT, ((CLIP, ""),))) == []


ONE_FILE = '''import torch


class Optimizer:
    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self._scaler.scale(loss).backward()

    def step(self):
        self._scaler.step(self._optimizer)
        self._scaler.update()


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.optim = Optimizer(opt)

    def accumulate(self, batches):
        for batch in batches:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(batch).mean()
            self.optim.backward(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optim.step()
'''


def test_one_file_the_wrappers_step_is_the_scalers_not_a_bypass():
    # before: AMP127 at `self.optim.step()` (line 28), and no AMP120
    assert one_file(ONE_FILE) == [(27, "AMP120")]
    clean = ONE_FILE.replace("        torch.nn.utils.clip_grad_norm_", "        self.optim._scaler.unscale_(self.optim._optimizer)\n"
                             "        torch.nn.utils.clip_grad_norm_")
    assert one_file(clean) == []


WRAPPER = '''import torch


class AmpWrapper:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def clip(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def apply(self, loss):
        self.backward(loss)
        self.clip()
        self.step()
'''


def test_self_step_composes_the_wrappers_step_for_the_clip():
    assert one_file(WRAPPER) == [(22, "AMP120")]  # at the call of `clip`, citing line 14
    unscaled = WRAPPER.replace("    def clip(self):\n", "    def clip(self):\n        self.scaler.unscale_(self.optimizer)\n")
    assert one_file(unscaled) == []


def test_self_step_that_bypasses_the_scaler_is_reported():
    bypass = WRAPPER.replace("        self.scaler.step(self.optimizer)\n", "        self.optimizer.step()\n")
    bypass = bypass.replace("        self.clip()\n", "")
    assert one_file(bypass) == [(22, "AMP127")]


def test_self_step_that_unscales_a_second_time_is_reported():
    twice = WRAPPER.replace("    def step(self):\n", "    def step(self):\n        self.scaler.unscale_(self.optimizer)\n")
    twice = twice.replace("        self.clip()\n", "        self.scaler.unscale_(self.optimizer)\n")
    assert one_file(twice) == [(24, "AMP123")]  # at `self.step()`, citing its unscale_


def test_a_wrapper_instance_step_in_a_function():
    source = WRAPPER.split("    def apply")[0] + '''

def train(model, loader, opt):
    wrapper = AmpWrapper(model, opt)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        wrapper.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        wrapper.step()
'''
    assert one_file(source) == [(28, "AMP120")]  # the clip


MIXIN_FILES = {
    "proj/steps.py": "class StepMixin:\n    def step(self):\n        self.scaler.step(self.optimizer)\n"
                     "        self.scaler.update()\n",
    "proj/trainer.py": '''import torch

from steps import StepMixin


class Trainer(StepMixin):
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(batch).mean()
        self.scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.step()
''',
}


def test_self_step_of_a_mixin_of_another_file():
    assert protocol(MIXIN_FILES) == [("trainer.py", 16, "AMP120")]
    fixed = dict(MIXIN_FILES)
    fixed["proj/trainer.py"] = fixed["proj/trainer.py"].replace(
        "        torch.nn.utils", "        self.scaler.unscale_(self.optimizer)\n        torch.nn.utils")
    assert protocol(fixed) == []


# -- tensor.backward(gradient) -------------------------------------------------------------
def test_a_gradient_backward_in_a_helper_of_another_file_is_reported_at_the_call():
    found, results = code_findings(load(CACHE), "AMP122", SETTINGS)
    assert found == [("run_train.py", 17, "AMP122")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP122"]
    assert "(at grad_cache/grad_cache.py:20, through this call)" in diag.message


def test_the_twin_scaling_the_representations_is_silent():
    files = load(CACHE, (("    def forward_backward(self, model, model_input):", "    def forward_backward(self, model, model_input, scaler):"),
                         ("        reps.backward(grad)", "        scaler.scale(reps).backward(grad)"),
                         ("cache.forward_backward(encoder, batch)", "cache.forward_backward(encoder, batch, scaler)")))
    assert protocol(files) == []


GRADIENT = '''import torch


def train(model, loader, opt):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            y = model(x)
        y.backward(torch.ones_like(y))
        scaler.step(opt)
        scaler.update()
'''


def test_a_gradient_made_like_the_tensor():
    assert one_file(GRADIENT) == [(9, "AMP122")]
    fixed = lint_source("probe.py", GRADIENT, SETTINGS, fix=True).fixed_source
    assert "scaler.scale(y).backward(torch.ones_like(y))" in fixed
    assert one_file(GRADIENT.replace("        y.backward(", "        scaler.scale(y).backward(")) == []


def test_no_evidence_of_a_tensor_gives_no_backward():
    # `engine.backward(grad)` (DeepSpeed's spelling) and a parameter never shown to be a tensor
    engine = GRADIENT.replace("def train(model, loader, opt):", "def train(model, loader, opt, engine):")
    engine = engine.replace("        y.backward(torch.ones_like(y))", "        grad = torch.ones_like(y)\n        engine.backward(grad)")
    assert one_file(engine) == []
    helper = GRADIENT.replace("        y.backward(torch.ones_like(y))", "        push(y, y.detach())") + (
        "\n\ndef push(out, grad):\n    out.backward(grad)\n")
    assert one_file(helper) == []


def test_one_file_a_wrapper_held_through_a_parameter_is_composed_by_the_project_pass():
    # `self.optim = optim` of a parameter: the file's call graph does not follow it, the class
    # flow does (`Trainer(model, Optimizer(opt))` in `main`): composed from the project's entries
    source = ONE_FILE.replace("    def __init__(self, model, opt):\n        self.model = model\n"
                              "        self.optim = Optimizer(opt)\n",
                              "    def __init__(self, model, optim):\n        self.model = model\n"
                              "        self.optim = optim\n")
    source += "\n\ndef main(model, opt, batches):\n    Trainer(model, Optimizer(opt)).accumulate(batches)\n"
    files = {"proj/onmt.py": source, "proj/other.py": "x = 1\n"}
    assert protocol(files) == [("onmt.py", 27, "AMP120")]
    clean = source.replace("        torch.nn.utils.clip_grad_norm_", "        self.optim._scaler.unscale_(self.optim._optimizer)\n"
                           "        torch.nn.utils.clip_grad_norm_")
    assert protocol({"proj/onmt.py": clean, "proj/other.py": "x = 1\n"}) == []


THREE_FILES = {
    "proj/pkg/__init__.py": "",
    "proj/pkg/base_optim.py": "class BaseOptimizer:\n    def step(self):\n        self._scaler.step(self._optimizer)\n"
                              "        self._scaler.update()\n",
    "proj/pkg/amp_optim.py": '''import torch

from pkg.base_optim import BaseOptimizer


class AmpOptimizer(BaseOptimizer):
    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        self._scaler.scale(loss).backward()
''',
    "proj/pkg/trainer.py": '''import torch

from pkg.amp_optim import AmpOptimizer


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.optim = AmpOptimizer(opt)

    def accumulate(self, batches):
        for batch in batches:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(batch).mean()
            self.optim.backward(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optim.step()
''',
}


def test_the_wrappers_step_inherited_from_a_third_file():
    assert protocol(THREE_FILES) == [("pkg/trainer.py", 16, "AMP120")]


def test_a_held_object_of_two_possible_classes_is_not_composed():
    # `self.optim` holds an AmpOptimizer or a PlainOptimizer: which `step` runs is not known
    files = dict(THREE_FILES)
    files["proj/pkg/plain_optim.py"] = "class PlainOptimizer:\n    def __init__(self, optimizer):\n" \
        "        self._optimizer = optimizer\n\n    def backward(self, loss):\n        loss.backward()\n\n" \
        "    def step(self):\n        self._optimizer.step()\n"
    trainer = files["proj/pkg/trainer.py"].replace(
        "from pkg.amp_optim import AmpOptimizer\n", "from pkg.amp_optim import AmpOptimizer\nfrom pkg.plain_optim import PlainOptimizer\n")
    files["proj/pkg/trainer.py"] = trainer.replace(
        "    def __init__(self, model, opt):\n        self.model = model\n        self.optim = AmpOptimizer(opt)\n",
        "    def __init__(self, model, opt, amp):\n        self.model = model\n"
        "        self.optim = AmpOptimizer(opt) if amp else PlainOptimizer(opt)\n")
    assert protocol(files) == []
