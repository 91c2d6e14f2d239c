"""Value constructs found by the fresh-layout benchmark (issue 26, benchmarks/fresh_layouts.py),
each in a multi-file project laid out like the public repository its test names, with a clean
twin that must stay silent; each hazard is missed on main."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def messages(files, code):
    return [d.message for result in lint_project(files, SETTINGS).values() for d in result.diagnostics
            if d.code == code]


# -- detectron2 projects/: a trainer subclass, a registry filled by another package -------------

D2 = "d2_project_registry"
D2_HAZARD = ("projects/PointSup/point_sup/point_sup_rcnn.py", 19, "AMP110")
D2_FIX = [("scores.masked_fill(~valid, -1e9)", "scores.masked_fill(~valid, torch.finfo(scores.dtype).min)")]
PLAIN_TRAIN_NET = '''
import torch

from detectron2.engine import SimpleTrainer
from detectron2.modeling import build_model


def main(cfg):
    model = build_model(cfg)
    SimpleTrainer(model, [], torch.optim.SGD(model.parameters(), lr=0.02)).train(0, 10)
'''


def test_d2_project_registers_its_meta_arch_and_amp_trainer_binds_through_super():
    # facebookresearch/detectron2 projects/PointSup: train_net.py imports point_sup (which
    # registers PointSupRCNN in detectron2's META_ARCH_REGISTRY) and detectron2.modeling; the
    # YAML names PointSupRCNN; `(AMPTrainer if ... else SimpleTrainer)(model, ...)` hands the
    # model to SimpleTrainer.__init__ through AMPTrainer's `super().__init__(model, ...)`
    files = load(D2)
    assert findings(files) == [D2_HAZARD]
    (message,) = messages(files, "AMP110")
    assert "self.model <- build_model(cfg) at projects/PointSup/train_net.py:19 -> PointSupRCNN" in message
    assert "the autocast region at detectron2/engine/train_loop.py:32" in message
    assert findings(load(D2, D2_FIX)) == []


def test_super_init_binds_the_base_constructor():
    # the constructor called directly (renamed: detectron2's own `AMPTrainer(model)` is a
    # framework setting of its own): only `super().__init__(model, ...)` binds SimpleTrainer's `model`
    direct = [("(AMPTrainer if cfg.SOLVER.AMP.ENABLED else SimpleTrainer)(", "AMPTrainer("),
              ("AMPTrainer", "MixedPrecisionTrainer")]
    assert findings(load(D2, direct)) == [D2_HAZARD]
    # the two-argument form naming the class itself is the same call
    named = ("super().__init__(model", "super(MixedPrecisionTrainer, self).__init__(model")
    assert findings(load(D2, direct + [named])) == [D2_HAZARD]
    # a base constructor given something else: nothing reaches the model
    other = load(D2, direct + [("super().__init__(model, data_loader, optimizer)",
                                "super().__init__(torch.nn.Identity(), data_loader, optimizer)")])
    assert findings(other) == []


def test_conditional_class_call_binds_either_constructor():
    # `(A if c else B)(model)` without the super() step: AMPTrainer stores the model itself
    files = load(D2, [("super().__init__(model, data_loader, optimizer)",
                       "self.model = model\n        self._data_loader_iter = iter(data_loader)\n"
                       "        self.optimizer = optimizer")])
    assert findings(files) == [D2_HAZARD]


def test_registration_by_another_package_needs_every_script_to_import_it():
    # tools/plain_train_net.py builds a model from detectron2 alone: PointSupRCNN is not
    # registered when it runs, so which class build_model makes is no longer decided
    files = load(D2)
    files[D2 + "/tools/plain_train_net.py"] = PLAIN_TRAIN_NET
    assert findings(files) == []
    ((call, why),) = [(call, why) for _, call, why in build(files).unresolved]
    assert "self.model at detectron2/engine/train_loop.py:33" == call
    assert "no config of the project gives" in why or "no class registered there" in why


# -- torchkeras: a class held in a class attribute -----------------------------------------------

KERAS = "torchkeras_runner"
KERAS_HAZARD = ("examples/text/model.py", 13, "AMP110")
KERAS_FIX = [("scores.masked_fill(~mask, -1e9)", "scores.masked_fill(~mask, torch.finfo(scores.dtype).min)")]


def test_class_attribute_holding_a_class_is_built_through_self():
    # lyhue1991/torchkeras: `StepRunner = StepRunner` in KerasModel's body; fit() builds
    # `self.StepRunner(net=self.net, ...)`, whose __call__ runs the net under autocast
    files = load(KERAS)
    assert findings(files) == [KERAS_HAZARD]
    (message,) = messages(files, "AMP110")
    assert "self.net <- MaskedMeanClassifier() at examples/text/train.py:9" in message
    assert findings(load(KERAS, KERAS_FIX)) == []


def test_class_attribute_is_read_from_its_own_class_only():
    # the attribute names another class (a runner without a region): nothing is reached
    files = load(KERAS, [("    StepRunner = StepRunner\n", "    StepRunner = EpochRunner\n")])
    assert findings(files) == []


# -- guided-diffusion: functools.partial of a bound method ---------------------------------------

GD = "gd_partial_losses"
GD_HAZARD = ("guided_diffusion/nn.py", 15, "AMP110")
GD_FIX = [("-1e9)", "th.finfo(weight.dtype).min)")]


def test_partial_of_a_bound_method_runs_the_method_with_its_bound_model():
    # openai/guided-diffusion train_util.py: `functools.partial(self.diffusion.training_losses,
    # self.ddp_model, ...)` called under the region runs GaussianDiffusion.training_losses,
    # whose `model(x_t, t, **model_kwargs)` is the UNet the partial binds
    files = load(GD)
    assert findings(files) == [GD_HAZARD]
    assert findings(load(GD, GD_FIX)) == []


def test_partial_binding_another_model_reaches_nothing():
    files = load(GD, [("                self.ddp_model,\n", "                th.nn.Identity(),\n")])
    assert findings(files) == []


# -- an instance built and called in one expression ----------------------------------------------

INLINE = "inline_instance_call"
INLINE_HAZARD = ("models/perceiver.py", 8, "AMP110")


def test_fresh_instance_called_at_once_runs_its_forward():
    # `MaskedAttentionPool()(latents, tokens, mask)` under the file's own region
    files = load(INLINE)
    assert findings(files) == [INLINE_HAZARD]
    assert findings(load(INLINE, [("-1e9)", "torch.finfo(scores.dtype).min)")])) == []


def test_fresh_instance_of_a_shadowing_local_is_not_the_class():
    # a local of the same name (a factory's result) is not the module's class
    files = load(INLINE, [("        with torch.autocast(", "        MaskedAttentionPool = torch.nn.Identity\n"
                           "        with torch.autocast(")])
    assert findings(files) == []


# -- SlowFast: an optimizer helper over a model its caller halved ---------------------------------

SLOWFAST = "slowfast_local_optimizer"
SLOWFAST_HAZARD = ("tools/train_net.py", 18, "AMP140")


def test_optimizer_helper_over_a_model_the_caller_halves():
    # construct_optimizer sorts `m.parameters()` of `model.named_modules()` into param groups;
    # train() passes the model after `model = model.half()`
    files = load(SLOWFAST)
    assert findings(files) == [SLOWFAST_HAZARD]
    (message,) = messages(files, "AMP140")
    assert "which the file casts to float16 (line 24)" in message
    assert findings(load(SLOWFAST, [("eps=1e-8", "eps=1e-4")])) == []


def test_optimizer_helper_over_a_float32_model_stays_silent():
    # the half copy is another model (an EMA teacher): the helper's model stays float32
    files = load(SLOWFAST, [("        model = model.half()\n", "        teacher = build_model(cfg).half()\n")])
    assert findings(files) == []
