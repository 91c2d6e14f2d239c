"""The points-to resolver wired into the project pass (issue 26, amplint/analysis/project/
pointsto_reach.py): calls the class flow cannot resolve reach their project function when the
resolver's answer is one function, with no unknown outside value and no full node at the call.
Each project is laid out like a public repository (named per test) and has a clean twin (the same
files with the hazard fixed) that must stay silent; each hazard is missed on main."""

from __future__ import annotations

from types import SimpleNamespace

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

load_project = load

SETTINGS = Settings.default()
ON = SimpleNamespace(value_flow=True)  # `value-flow = true` (off by default: its cost)


def findings(results):
    return project_findings(results)


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


MMDET_FIX = [("scores = torch.sigmoid(cls_score)", "scores = cls_score"),
             ("F.binary_cross_entropy(scores", "F.binary_cross_entropy_with_logits(scores")]


def test_mmdet_multi_apply_callback():
    # open-mmlab/mmdetection 2.x: `multi_apply(self.loss_single, ...)` in AnchorHead.loss, with
    # multi_apply re-exported by `mmdet.core` through `from .utils import *`: the callback runs
    # under the region that reaches `loss` (`model.forward_train` in mmdet/apis/train.py)
    results = lint_project(load("flow_mmdet_multi_apply"), SETTINGS, config=ON)
    assert findings(results) == [("mmdet/models/dense_heads/anchor_head.py", 22, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert "passed at mmdet/models/dense_heads/anchor_head.py:27 to a function that calls it" in message
    assert "the autocast region at mmdet/apis/train.py:13" in message
    assert findings(lint_project(load("flow_mmdet_multi_apply", MMDET_FIX), SETTINGS, config=ON)) == []


def test_callback_needs_a_callee_that_calls_it():
    # the same bound method passed to a helper that only stores it: not a call, no region
    files = load("flow_mmdet_multi_apply", [
        ("    pfunc = partial(func, **kwargs) if kwargs else func\n"
         "    map_results = map(pfunc, *args)\n"
         "    return tuple(map(list, zip(*map_results)))\n",
         "    HOOKS.append(func)\n    return [], []\n"),
        ("def multi_apply(", "HOOKS = []\n\n\ndef multi_apply("),
    ])
    assert "HOOKS.append(func)" in files["flow_mmdet_multi_apply/mmdet/core/utils/misc.py"]
    assert findings(lint_project(files, SETTINGS, config=ON)) == []


def test_mmpt_self_call_reaches_forward():
    # facebookresearch/fairseq examples/MMPT: MMFusionNLG.generate calls `self(caps, cmasks)`;
    # the predictor runs generate under autocast
    results = lint_project(load("flow_mmpt_self_call"), SETTINGS, config=ON)
    assert findings(results) == [("mmpt/models/mmfusionnlg.py", 14, "AMP110")]
    (message,) = messages(results, "AMP110")
    assert "called at mmpt/models/mmfusionnlg.py:20 (MMFusionNLG.forward" in message
    clean = load("flow_mmpt_self_call", [("-1e9", "torch.finfo(scores.dtype).min")])
    assert findings(lint_project(clean, SETTINGS, config=ON)) == []


def test_value_flow_option_off_keeps_the_class_flow_only():
    off = SimpleNamespace(value_flow=False)
    assert findings(lint_project(load("flow_mmpt_self_call"), SETTINGS)) == []  # the default
    assert findings(lint_project(load("flow_mmpt_self_call"), SETTINGS, config=off)) == []
    assert findings(lint_project(load("flow_mmdet_multi_apply"), SETTINGS, config=off)) == []
    assert build(load("flow_mmpt_self_call"), config=off).values is None


def test_generate_outside_a_region_reaches_nothing():
    # the predictor's region removed: `self(...)` is resolved but nothing runs under autocast
    files = load("flow_mmpt_self_call", [
        ('with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):', "with torch.no_grad():")])
    assert findings(lint_project(files, SETTINGS, config=ON)) == []


def test_fairseq_train_function_gets_its_call_sites():
    # facebookresearch/fairseq fairseq_cli: a project function named `train` (a chain method's
    # name: `model.train()`) called as `train(cfg, model, criterion, ...)` from hydra_train.py
    # binds `criterion`, so `criterion(...)` under the region in train() reaches the loss
    results = lint_project(load("flow_fairseq_train_fn"), SETTINGS)
    assert findings(results) == [("fairseq/criterions/focal_loss.py", 13, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert "criterion <- FocalLossCriterion(gamma=cfg.gamma) at fairseq_cli/hydra_train.py:10" in message
    clean = load("flow_fairseq_train_fn", [
        ("prob = torch.sigmoid(logits)", "prob = torch.sigmoid(logits.float())"),
        ("F.binary_cross_entropy(prob,", "F.binary_cross_entropy_with_logits(logits.float(),")])
    assert findings(lint_project(clean, SETTINGS)) == []
    # `model.train(cfg)` (a method of a value, not the function) binds nothing
    method = load("flow_fairseq_train_fn", [("        train(cfg, model,", "        model.train(cfg, model,")])
    assert findings(lint_project(method, SETTINGS)) == []


def test_two_candidate_classes_are_not_an_answer():
    # `self(...)` where `self` may be MMFusionNLG or a subclass (same module) the predictor also
    # builds: two forwards, so the resolver does not answer (one may be a merge of abstract
    # objects, as registries are); the class flow's own answers are unchanged
    files = load("flow_mmpt_self_call")
    model = "flow_mmpt_self_call/mmpt/models/mmfusionnlg.py"
    files[model] += (
        "\n\nclass MMFusionRet(MMFusionNLG):\n"
        "    def forward(self, caps, cmasks):\n        return self.proj(caps)\n")
    predictor = "flow_mmpt_self_call/mmpt/evaluators/predictor.py"
    files[predictor] = files[predictor].replace(
        "from mmpt.models import MMFusionNLG\n",
        "from mmpt.models import MMFusionNLG\nfrom mmpt.models.mmfusionnlg import MMFusionRet\n").replace(
        "        self.model = MMFusionNLG()\n",
        "        self.model = MMFusionNLG() if checkpoint.endswith('nlg.pt') else MMFusionRet()\n")
    assert "MMFusionRet()" in files[predictor]
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
    # the subclass alone: its own forward runs (no hazard), never MMFusionNLG.forward
    files[predictor] = files[predictor].replace("MMFusionNLG() if checkpoint.endswith('nlg.pt') else ", "")
    assert findings(lint_project(files, SETTINGS, config=ON)) == []


def test_a_call_under_the_files_own_disabled_region_is_not_reached():
    # generate() wraps its `self(...)` in `torch.autocast("cuda", enabled=False)` (timm's
    # patch_embed resize matrix does so): the value flow leaves that call to the file's region
    files = load("flow_mmpt_self_call", [(
        "            logits = self(caps, cmasks)\n",
        "            with torch.autocast(\"cuda\", enabled=False):\n                logits = self(caps, cmasks)\n")])
    assert "enabled=False" in files["flow_mmpt_self_call/mmpt/models/mmfusionnlg.py"]
    assert findings(lint_project(files, SETTINGS, config=ON)) == []


def test_value_flow_is_read_from_pyproject(tmp_path):
    from amplint.workspace.config import ConfigError, load

    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.amplint]\nselect = ['AMP']\n")
    assert load(str(path)).value_flow is False
    path.write_text("[tool.amplint]\nvalue-flow = true\n")
    config = load(str(path))
    assert config.value_flow is True
    assert findings(lint_project(load_project("flow_mmpt_self_call"), SETTINGS, config=config)) == [
        ("mmpt/models/mmfusionnlg.py", 14, "AMP110")]
    path.write_text("[tool.amplint]\nvalue-flow = 'yes'\n")
    try:
        load(str(path))
    except ConfigError as exc:
        assert "value-flow" in str(exc)
    else:
        raise AssertionError("a non-boolean value-flow was accepted")


def test_fastai_loss_func_bound_by_a_script_importing_the_region_file():
    # fastai/fastai: `Learner(dls, model, loss_func=soft_bce_flat, fp16=True)` in a notebook
    # script; the Learner's own `_do_one_batch` calls `self.loss_func(...)` under its autocast.
    # The value comes from the script, which imports the region's file. Since the class flow binds
    # a project function passed as an argument (tests/test_carriers.py), it finds this itself,
    # value flow on or off, and the value flow has nothing left to answer
    for config in (ON, None):
        results = lint_project(load("flow_fastai_loss_func"), SETTINGS, config=config)
        assert findings(results) == [("fastai/losses.py", 5, "AMP102")]
        (message,) = messages(results, "AMP102")
        assert ("(self.loss_func -> soft_bce_flat in fastai/losses.py; called at fastai/learner.py:14 under the "
                "autocast region at fastai/learner.py:12)") in message
        twin = load("flow_fastai_loss_func", [("loss_func=soft_bce_flat", "loss_func=mse_flat"),
                                              ("import soft_bce_flat", "import mse_flat")])
        assert findings(lint_project(twin, SETTINGS, config=config)) == []


MINGPT_FIX = [("carry = torch.sigmoid(trainer.logits[:, -1, 0])\n", "carry = trainer.logits[:, -1, 0]\n"),
              ("F.binary_cross_entropy(carry,", "F.binary_cross_entropy_with_logits(carry,")]


def test_mingpt_callback_filed_by_event_runs_under_the_region():
    # karpathy/minGPT mingpt/trainer.py: `add_callback(onevent, callback)` files the callback in a
    # defaultdict(list) by its event string; `trigger_callbacks("on_batch_loss")` under the
    # trainer's autocast calls each callback of that event (projects/adder/adder.py's)
    results = lint_project(load("flow_mingpt_callbacks"), SETTINGS, config=ON)
    assert findings(results) == [("projects/adder/adder.py", 11, "AMP102")]
    (message,) = messages(results, "AMP102")
    assert "called at mingpt/trainer.py:26 (carry_loss_callback in projects/adder/adder.py" in message
    assert "in Trainer.trigger_callbacks, called at mingpt/trainer.py:33" in message
    # the twin; and eval_callback, filed under an event the region never triggers, stays silent
    assert findings(lint_project(load("flow_mingpt_callbacks", MINGPT_FIX), SETTINGS, config=ON)) == []
    assert findings(lint_project(load("flow_mingpt_callbacks"), SETTINGS)) == []  # value-flow off


def test_mingpt_callbacks_of_another_event_are_not_reached():
    # the region triggers the event eval_callback is filed under: that one is reached instead
    files = load("flow_mingpt_callbacks", [('self.trigger_callbacks("on_batch_loss")',
                                            'self.trigger_callbacks("on_epoch_end")')])
    assert findings(lint_project(files, SETTINGS, config=ON)) == [("projects/adder/adder.py", 17, "AMP102")]


def test_mingpt_set_callback_replaces_by_event():
    # `set_callback(onevent, callback)`: `self.callbacks[onevent] = [callback]`, read the same way
    files = load("flow_mingpt_callbacks", [('trainer.add_callback("on_batch_loss"',
                                            'trainer.set_callback("on_batch_loss"')])
    assert findings(lint_project(files, SETTINGS, config=ON)) == [("projects/adder/adder.py", 11, "AMP102")]


def test_mingpt_callbacks_triggered_under_an_fp32_island_are_its_business():
    # the trainer triggers its callbacks under `autocast(enabled=False)` inside the region
    files = load("flow_mingpt_callbacks", [(
        "        for callback in self.callbacks.get(onevent, []):\n            callback(self)\n",
        "        with torch.autocast(\"cuda\", enabled=False):\n"
        "            for callback in self.callbacks.get(onevent, []):\n                callback(self)\n")])
    assert "enabled=False" in files["flow_mingpt_callbacks/mingpt/trainer.py"]
    assert findings(lint_project(files, SETTINGS, config=ON)) == []
