"""Classes, functions and models reached through builders (issue 26, round 44), read by every rule
that asks "which class / model / optimizer is this":

- a helper of the file returning a new instance of one imported class on every path is that
  class (facts/builder_returns.py through facts/chosen_classes.py): AMP102 reads the loss a helper
  builds, AMP152 the optimizer a helper builds over the parameters of the model its caller
  passes (LoRA's `create_adam_optimizer_from_args(model, args)`);
- a half model moved afterwards (`Net().half().to("cuda")`, `.cuda()`) keeps its cast
  (returned_casts.moved_root), for AMP152 and AMP140 alike; a copy's cast
  (`copy.deepcopy(model).half()`) is not the original's;
- a name -> (builder, ...) dict whose builders are factories of the file
  (EfficientViT's `REGISTERED = {"b0": (lite_mla_b0, "cityscapes")}`, `builder, _ = D[name];
  return builder(...)`) picks the class the key names: the fp16 class facts (AMP140, AMP141);
- `forward = staticmethod(_fwd)` in a Function body (safari's FusedGateProjFunc) is the
  Function's static forward: AMP151, in the file and through the project entry.
Exact or nothing: a key, parameter or helper that does not agree gives no class.

Projects (tests/projects): builders_yolov5_half_optim (ultralytics/yolov5's train.py with a
`smart_optimizer(model, ...)` helper and models/yolo.py, in a fork that trains in pure fp16) and
builders_xformers_static (an ops module of autograd Functions shaped like facebookresearch/
xformers' swiglu op, a model module applying it under autocast), each with a clean twin."""

from __future__ import annotations

import copy
import os
import sys

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import PROJECTS, code_findings, load

SETTINGS = Settings.default()
NET = (
    "import copy\n"
    "import torch\n"
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.base = nn.Linear(8, 8)\n"
    "    def forward(self, x):\n"
    "        return self.base(x)\n"
)  # 9 lines


def findings(source, code):
    return sorted(d.line for d in lint_source("case.py", source, SETTINGS).diagnostics if d.code == code)


# -- a half model moved after its cast ---------------------------------------------------------
TRAIN = (
    "def main(loader):\n"
    "    net = {made}\n"  # line 11
    "    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)\n"  # line 12
    "    for x in loader:\n"
    "        net(x).float().pow(2).mean().backward()\n"
    "        optimizer.step()\n"
)


@pytest.mark.parametrize("made", ['Net().half().to("cuda")', "Net().half().cuda().train()",
                                  'Net().to("cuda").half().to("cuda", non_blocking=True)'])
def test_a_moved_half_model_is_trained_in_half(made):
    source = NET + TRAIN.format(made=made)
    assert findings(source, "AMP152") == [11]
    assert findings(source, "AMP140") == [12]  # Adam's default eps over the half parameters


@pytest.mark.parametrize("made", ["Net().half().float()", "Net().half().to(dtype)",
                                  'Net().to("cuda")'])
def test_a_model_cast_back_or_never_cast_is_not(made):
    source = NET + TRAIN.format(made=made)
    assert findings(source, "AMP152") == [] and findings(source, "AMP140") == []


def test_a_copys_cast_is_not_the_originals():
    source = NET + TRAIN.format(made='Net().to("cuda")').replace(
        "    for x", "    ema = copy.deepcopy(net).half()\n    for x")
    assert findings(source, "AMP140") == [] and findings(source, "AMP152") == []


# -- an optimizer or a loss a helper builds ------------------------------------------------------
HELPED = (
    "def make_optimizer(model, lr=1e-3):\n"
    "    params = [p for p in model.parameters() if p.requires_grad]\n"
    "    return torch.optim.AdamW(params, lr=lr, eps=1e-6)\n"
    "def main(loader, head):\n"
    "    net = Net().half()\n"  # line 14
    "    optimizer = {built}\n"
    "    for x in loader:\n"
    "        net(x).float().pow(2).mean().backward()\n"
    "        optimizer.step()\n"
)


@pytest.mark.parametrize("built", ["make_optimizer(net)", "make_optimizer(model=net, lr=3e-4)",
                                   "make_optimizer(net, 1e-4)"])
def test_an_optimizer_a_helper_builds_over_the_half_model(built):
    assert findings(NET + HELPED.format(built=built), "AMP152") == [14]


@pytest.mark.parametrize("built, helper", [
    ("make_optimizer(head)", None),  # over another model's parameters
    ("make_optimizer(*models)", None),  # a starred argument: which model is unknown
    ("make_optimizer(net)", "def make_optimizer(model, lr=1e-3):\n"  # the helper rebinds it
                            "    model = copy.deepcopy(model).float()\n"
                            "    return torch.optim.AdamW(model.parameters(), lr=lr)\n"),
    ("make_optimizer(net)", "def make_optimizer(model, lr=1e-3):\n"  # returns disagree
                            "    if lr > 1:\n        return torch.optim.SGD(model.parameters(), lr=lr)\n"
                            "    return torch.optim.AdamW(model.parameters(), lr=lr)\n"),
    ("make_optimizer(net)", "def make_optimizer(model, lr=1e-3):\n"  # falls off the end
                            "    if lr < 1:\n        return torch.optim.AdamW(model.parameters(), lr=lr)\n"),
])
def test_a_helper_that_does_not_agree_gives_no_optimizer(built, helper):
    source = NET + HELPED.format(built=built)
    if helper is not None:
        start = source.index("def make_optimizer")
        source = source[:start] + helper + source[source.index("def main"):]
    assert findings(source, "AMP152") == []


def test_a_method_building_the_optimizer():
    source = NET + (
        "class Trainer:\n"
        "    def __init__(self, lr):\n"
        "        self.lr = lr\n"
        "        self.model = Net().cuda().half()\n"  # line 13
        "        self.optimizer = self.build_optimizer(self.model)\n"
        "    def build_optimizer(self, model):\n"
        "        return torch.optim.SGD(model.parameters(), lr=self.lr, momentum=0.9)\n"
        "    def step(self, x):\n"
        "        self.model(x).float().pow(2).mean().backward()\n"
        "        self.optimizer.step()\n"
    )
    assert findings(source, "AMP152") == [13]


LOSS = (
    "import torch\n"
    "import torch.nn as nn\n"
    "{helper}"
    "class Trainer:\n"
    "    def __init__(self, model):\n"
    "        self.model = model\n"
    "        self.criterion = make_criterion()\n"
    "    def step(self, x, y):\n"
    "        with torch.autocast('cuda', dtype=torch.float16):\n"
    "            return self.criterion(torch.sigmoid(self.model(x)), y)\n"
)


def test_a_bce_loss_a_helper_builds_is_flagged():
    helper = "def make_criterion(reduction='mean'):\n    return nn.BCELoss(reduction=reduction)\n"
    assert findings(LOSS.format(helper=helper), "AMP102") == [11]


@pytest.mark.parametrize("helper", [
    "def make_criterion():\n    return nn.BCEWithLogitsLoss()\n",
    "def make_criterion(logits=True):\n    if logits:\n        return nn.BCEWithLogitsLoss()\n"
    "    return nn.BCELoss()\n",
    "def make_criterion():\n    crit = nn.BCELoss()\n    crit = Wrapped(crit)\n    return crit\n",
])
def test_a_helper_without_one_bce_class_is_not(helper):
    assert findings(LOSS.format(helper=helper), "AMP102") == []


# -- a name -> (builder, ...) dict of factories --------------------------------------------------
REGISTRY = (
    "import torch\n"
    "import torch.nn as nn\n"
    "class LiteMLA(nn.Module):\n"
    "    def __init__(self, dim=8, eps=1.0e-15):\n"
    "        super().__init__()\n"
    "        self.eps = eps\n"
    "        self.qkv = nn.Linear(dim, 3 * dim)\n"
    "    def forward(self, x):\n"
    "        out = self.qkv(x)\n"
    "        norm = out.pow(2).sum(-1, keepdim=True).sqrt()\n"  # line 10: AMP141
    "        return out / (norm + self.eps)\n"  # line 11: AMP140
    "class Tiny(nn.Module):\n"
    "    def __init__(self, dim=8):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(dim, dim)\n"
    "    def forward(self, x):\n"
    "        return torch.tanh(self.fc(x))\n"
    "def lite_mla_b0(dataset, **kwargs):\n"
    "    return LiteMLA(**kwargs)\n"
    "def tiny_b0(dataset, **kwargs):\n"
    "    return Tiny(**kwargs)\n"
    "REGISTERED = {{\"b0-cityscapes\": (lite_mla_b0, \"cityscapes\"), \"t0-ade\": (tiny_b0, \"ade20k\")}}\n"
    "{extra}"
    "def create_model(name, **kwargs):\n"
    "    model_cls, dataset = REGISTERED[name]\n"
    "    return model_cls(dataset=dataset, **kwargs)\n"
    "def main(x):\n"
    "    model = {made}.cuda().half().eval()\n"
    "    with torch.inference_mode():\n"
    "        return model(x.cuda().half())\n"
)


@pytest.mark.parametrize("made", ['create_model("b0-cityscapes")', 'create_model(name="b0-cityscapes", dim=16)'])
def test_a_class_built_through_a_tuple_registry_is_half(made):
    source = REGISTRY.format(made=made, extra="")
    assert findings(source, "AMP140") == [11]
    assert findings(source, "AMP141") == [10]


@pytest.mark.parametrize("made, extra", [
    ('create_model("t0-ade")', ""),  # the key names the other builder
    ("create_model(args.model)", ""),  # no literal key: the classes disagree
    ('create_model("b0-cityscapes")', 'REGISTERED["b0-cityscapes"] = (tiny_b0, "x")\n'),  # changed
    ('create_model("b1")', ""),  # a key the dict does not hold
])
def test_a_registry_pick_that_is_not_exact_is_silent(made, extra):
    source = REGISTRY.format(made=made, extra=extra)
    assert findings(source, "AMP140") == [] and findings(source, "AMP141") == []


# -- forward = staticmethod(fn) ------------------------------------------------------------------
FUNCTION = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "{decorate_fwd}def _gate_forward(ctx, y, v, weight):\n"
    "    ctx.save_for_backward(y, v, weight)\n"
    "    return F.linear(y * v, weight)\n"
    "{decorate_bwd}def _gate_backward(ctx, grad):\n"
    "    y, v, weight = ctx.saved_tensors\n"
    "    g = grad @ weight\n"
    "    return g * v, g * y, None\n"
    "class GateFunc(torch.autograd.Function):\n"
    "    forward = {forward}\n"
    "    backward = staticmethod(_gate_backward)\n"
    "def run(y, v, w):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        return GateFunc.apply(y, v, w)\n"  # line 15
)


def test_a_forward_assigned_from_staticmethod_is_the_functions_forward():
    source = FUNCTION.format(decorate_fwd="", decorate_bwd="", forward="staticmethod(_gate_forward)")
    assert findings(source, "AMP151") == [15]


@pytest.mark.parametrize("decorate_fwd, decorate_bwd, forward", [
    ("@torch.amp.custom_fwd(device_type='cuda')\n", "@torch.amp.custom_bwd(device_type='cuda')\n",
     "staticmethod(_gate_forward)"),  # decorated where it is defined
    ("", "", "staticmethod(kernels.gate_forward)"),  # a function the file does not show
    ("", "", "_gate_forward"),  # no staticmethod: not the static forward this reads
])
def test_an_assigned_forward_not_read_exactly_is_silent(decorate_fwd, decorate_bwd, forward):
    source = FUNCTION.format(decorate_fwd=decorate_fwd, decorate_bwd=decorate_bwd, forward=forward)
    assert findings(source, "AMP151") == []


# -- the projects --------------------------------------------------------------------------------
def test_yolov5_fork_trains_a_moved_half_model_with_a_helpers_adam():
    files = load("builders_yolov5_half_optim")
    assert code_findings(files, "AMP152", SETTINGS)[0] == [("train.py", 17, "AMP152")]
    assert code_findings(files, "AMP140", SETTINGS)[0] == [("train.py", 8, "AMP140")]


def test_yolov5_twin_halves_only_its_ema_copy():
    files = load("builders_yolov5_half_optim_clean")
    assert code_findings(files, "AMP152", SETTINGS)[0] == []
    assert code_findings(files, "AMP140", SETTINGS)[0] == []


def test_xformers_fork_applies_an_assigned_forward_under_autocast():
    assert code_findings(load("builders_xformers_static"), "AMP151", SETTINGS)[0] == \
        [("model/block.py", 14, "AMP151")]
    assert code_findings(load("builders_xformers_static_clean"), "AMP151", SETTINGS)[0] == []


# -- the dtype claims, under torch 2.13 on CPU -------------------------------------------------------
def test_torch_a_moved_half_model_stays_half_and_adam_eps_rounds_to_zero():
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(4, 4).half().to("cpu")
    assert {p.dtype for p in net.parameters()} == {torch.float16}
    model = torch.nn.Linear(4, 4)
    copy.deepcopy(model).half()
    assert {p.dtype for p in model.parameters()} == {torch.float32}  # a copy's cast is the copy's
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
    assert torch.tensor(1e-15, dtype=torch.float16).item() == 0.0


def test_torch_the_assigned_forward_raises_and_its_decorated_twin_runs(tmp_path):
    """Under CPU bfloat16 autocast (the projects name "cuda"; the decorators are given "cpu" here so
    that CPU autocast applies them): the undecorated Function's backward mixes bfloat16 and float32
    and raises; the decorated twin's backward runs under the forward's autocast state."""
    torch = pytest.importorskip("torch")
    results = {}
    for name in ("builders_xformers_static", "builders_xformers_static_clean"):
        root = tmp_path / name
        for path, text in load(name, replace=(('"cuda"', '"cpu"'),)).items():
            target = tmp_path / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        sys.path.insert(0, str(root))
        try:
            for module in [m for m in sys.modules if m.split(".")[0] in ("model", "ops")]:
                del sys.modules[module]
            from model.block import FeedForward  # type: ignore[import-not-found]
            model = FeedForward(8, 16)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(torch.randn(4, 8))
            try:
                out.float().sum().backward()
                results[name] = "ran"
            except RuntimeError as error:
                results[name] = str(error)
        finally:
            sys.path.remove(str(root))
            for module in [m for m in sys.modules if m.split(".")[0] in ("model", "ops")]:
                del sys.modules[module]
    assert "same dtype" in results["builders_xformers_static"]
    assert results["builders_xformers_static_clean"] == "ran"
    assert os.path.isdir(os.path.join(PROJECTS, "builders_xformers_static"))
