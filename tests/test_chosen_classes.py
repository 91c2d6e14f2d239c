"""Classes a string picks (issue 26, facts/chosen_classes.py), read by every rule that asks which
class an instance is: AMP102 (the loss) and the GradScaler facts (AMP120/122/124). Exact or
nothing: an unknown key, a dict changed anywhere, a builder whose returns disagree give no class."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project import lint_project

from project_files import load

HEAD = "import torch\nimport torch.nn as nn\n"
LOSSES = 'LOSSES = {"cross_entropy": nn.CrossEntropyLoss, "bce": nn.BCELoss, "bce_logits": nn.BCEWithLogitsLoss}\n'
BUILD = "def build_loss(name, **kwargs):\n    return LOSSES[name](**kwargs)\n"
MODULE = (
    "class Head(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.loss_fn = {ctor}\n"
    "    def training_step(self, logits, y):\n"
    "        with torch.autocast('cuda', dtype=torch.float16):\n"
    "            return self.loss_fn(torch.sigmoid(logits), y)\n"
)


def codes(source):
    return sorted((d.line, d.code) for d in lint_source("case.py", source, Settings.default()).diagnostics)


def head(ctor, extra=""):
    return HEAD + LOSSES + extra + BUILD + MODULE.format(ctor=ctor)


@pytest.mark.parametrize("ctor", [
    'build_loss("bce", reduction="mean")',  # pytorchvideo's builder
    'build_loss(name="bce")',  # the key by keyword
    'LOSSES["bce"]()',  # the dict read directly
    'getattr(nn, "BCELoss")()',  # a literal attribute of the module
])
def test_bce_picked_by_a_string_is_flagged(ctor):
    assert (12, "AMP102") in codes(head(ctor))


def test_bce_picked_by_a_local_key_and_a_default():
    source = (HEAD + LOSSES + "def make(name='bce'):\n    return LOSSES[name]()\n"
              "def step(logits, y):\n    key = 'bce'\n    crit = LOSSES[key]()\n    other = make()\n"
              "    with torch.autocast('cuda'):\n"
              "        return crit(torch.sigmoid(logits), y) + other(torch.sigmoid(logits), y)\n")
    assert codes(source).count((11, "AMP102")) == 2


def test_a_builders_call_is_not_rewritten_as_the_class():
    """The instance fix would put `BCEWithLogitsLoss` where `build_loss` is, with the builder's
    arguments: only the island fix is offered."""
    fixed = lint_source("case.py", head('build_loss("bce")'), Settings.default(), fix=True).fixed_source
    assert 'build_loss("bce")' in fixed and "enabled=False" in fixed and "BCEWithLogitsLoss()" not in fixed
    direct = lint_source("case.py", head('LOSSES["bce"]()'), Settings.default(), fix=True).fixed_source
    assert "nn.BCEWithLogitsLoss()" in direct and "(logits, y)" in direct


@pytest.mark.parametrize("ctor, extra", [
    ('build_loss("bce_logits")', ""),  # the with-logits class
    ("build_loss(cfg_name)", "cfg_name = input()\n"),  # a key no literal fixes
    ('build_loss("bce")', 'LOSSES["bce"] = nn.BCEWithLogitsLoss\n'),  # the dict changed
    ('build_loss("bce")', 'LOSSES.update(bce=nn.BCEWithLogitsLoss)\n'),
    ('build_loss("focal")', ""),  # a key the dict does not hold
    ('build_loss(*names)', "names = ['bce']\n"),  # a starred argument may fill the key
])
def test_unknown_or_other_class_stays_silent(ctor, extra):
    assert "AMP102" not in {code for _, code in codes(head(ctor, extra))}


def test_builder_whose_returns_disagree_stays_silent():
    source = HEAD + LOSSES + (
        "def build_loss(name, logits=False):\n"
        "    if logits:\n        return nn.BCEWithLogitsLoss()\n"
        "    return LOSSES[name]()\n") + MODULE.format(ctor='build_loss("bce")')
    assert "AMP102" not in {code for _, code in codes(source)}


SCALER = (
    "import torch\n"
    "SCALERS = {{'native': torch.cuda.amp.GradScaler}}\n"
    "def train(model, opt, loader):\n"
    "    scaler = {ctor}\n"
    "    for x, y in loader:\n"
    "        with torch.autocast('cuda', dtype=torch.{dtype}):\n"
    "            loss = model(x, y)\n"
    "        {backward}\n"
    "        scaler.step(opt)\n"
    "        scaler.update()\n"
)


def test_scaler_picked_by_a_string_disabled_is_not_a_clip_hazard():
    """`SCALERS['native'](enabled=False)`: the scaler's own `enabled=`, read through the dict."""
    source = SCALER.format(ctor="SCALERS['native'](enabled=False)", dtype="float16", backward=(
        "scaler.scale(loss).backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"))
    assert "AMP120" not in {code for _, code in codes(source)}
    assert (9, "AMP120") in codes(source.replace("enabled=False", "enabled=True"))


def test_scaler_picked_by_a_string_is_a_scaler():
    unscaled = SCALER.format(ctor="SCALERS['native']()", dtype="float16", backward="loss.backward()")
    assert (8, "AMP122") in codes(unscaled)
    bf16 = SCALER.format(ctor="getattr(torch.cuda.amp, 'GradScaler')()", dtype="bfloat16",
                         backward="scaler.scale(loss).backward()")
    assert (4, "AMP124") in codes(bf16)
    other = SCALER.format(ctor="SCALERS[kind]()", dtype="bfloat16", backward="scaler.scale(loss).backward()")
    assert "AMP124" not in {code for _, code in codes(other)}


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items() for d in result.diagnostics)


def test_project_loss_class_picked_by_a_string_called_from_another_file():
    """SlowFast's `_LOSSES` + `get_loss_func(name)` (a builder returning the class); the region
    is the training script's."""
    found = findings(lint_project(load("chosen_loss_slowfast"), Settings.default()))
    assert ("chosen_loss_slowfast/slowfast/models/head.py", 28, "AMP102") in found
    clean = findings(lint_project(load("chosen_loss_slowfast_clean"), Settings.default()))
    assert clean == []


# -- the class flow: a core op a constructor's string picks (InternImage / DCNv4) -----------------

DCN = "chosen_core_op_dcnv4/models/flash_intern_image.py"


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


def test_project_core_op_picked_by_getattr_on_this_module():
    """`getattr(sys.modules[__name__], core_op)` with `core_op` the constructor's default, which
    the training script's `FlashInternImage(channels=64)` leaves as is."""
    found = findings(lint_project(load("chosen_core_op_dcnv4"), Settings.default()))
    assert (DCN, 30, "AMP151") in found
    clean = load("chosen_core_op_dcnv4_clean")  # the call picks the depthwise conv
    assert findings(lint_project(clean, Settings.default())) == []


def test_core_op_read_through_globals_and_one_file():
    files = load("chosen_core_op_dcnv4", [("getattr(sys.modules[__name__], core_op)", "globals()[core_op]")])
    found = messages(lint_project(files, Settings.default()), "AMP151")
    assert len(found) == 1 and "(core_op = 'DCNv4' at tools/train.py:7)" in found[0]
    one = {"m.py": files[DCN] + "\n\n" + files["chosen_core_op_dcnv4/tools/train.py"].replace(
        "from models.flash_intern_image import FlashInternImage\n", "")}
    found = messages(lint_project(one, Settings.default()), "AMP151")
    assert len(found) == 1 and "(core_op = 'DCNv4' at m.py:" in found[0]


def test_core_op_fixed_by_the_calls_is_cited_exactly():
    found = messages(lint_project(load("chosen_core_op_dcnv4"), Settings.default()), "AMP151")
    assert len(found) == 1 and "(core_op = 'DCNv4' at tools/train.py:7)" in found[0]


@pytest.mark.parametrize("replace", [
    # a subclass: its calls reach the constructor with arguments no call here shows
    [("def train(", "class Big(FlashInternImage):\n    pass\n\n\ndef train(")],
    # a caller that gives a string no literal fixes
    [("FlashInternImage(channels=64)", "FlashInternImage(channels=64, core_op=op)"),
     ("def train(loader, epochs=1):", "def train(loader, op, epochs=1):")],
])
def test_core_op_not_fixed_by_the_calls_is_no_exact_class(replace):
    """No literal decides: the module's namespace is read as `globals()[name]` is, every member
    a possible class, each cited as one of them (never as the default)."""
    found = messages(lint_project(load("chosen_core_op_dcnv4", replace), Settings.default()), "AMP151")
    assert found and all("1 of the 4 names" in m and "core_op = 'DCNv4' at" not in m for m in found)


def test_the_function_raises_in_backward_under_autocast():
    """The dtype claim, under CPU autocast bfloat16 (torch 2.13): forward's bmm runs in bf16,
    backward multiplies the bf16 gradient with the saved float32 tensor and raises."""
    torch = pytest.importorskip("torch")
    namespace = {}
    exec(compile(load("chosen_core_op_dcnv4")[DCN].split("class DCNv4(nn.Module)")[0], "m", "exec"), namespace)
    value = torch.randn(2, 3, 4, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = namespace["DCNv4Function"].apply(value, torch.randn(2, 4, 4), 4)
    assert out.dtype == torch.bfloat16
    with pytest.raises(RuntimeError):
        out.float().sum().backward()


# -- a builder of another file (project/chosen_builders.py) ------------------------------------------

def _split_loss(replace=()):
    """The SlowFast-shaped project with its loss table in a losses module of its own, built by
    name (`build_loss`, pytorchvideo's spelling) from the head's file; the table also holds a
    class of that module and is read by `name in _LOSSES` / `sorted(_LOSSES)`."""
    files = load("chosen_loss_slowfast", replace)
    head = "chosen_loss_slowfast/slowfast/models/head.py"
    text = files[head]
    table = text[text.index("_LOSSES = {"):text.index("class MultiLabelHead")]
    files["chosen_loss_slowfast/slowfast/models/losses.py"] = (
        "import torch.nn as nn\n\n\nclass SoftTargetCrossEntropy(nn.Module):\n    pass\n\n\n"
        + table.replace('"bce_logit": nn.BCEWithLogitsLoss,', '"bce_logit": nn.BCEWithLogitsLoss,\n    "soft": SoftTargetCrossEntropy,')
        .replace("def get_loss_func(loss_name):\n    return _LOSSES[loss_name]",
                 "def build_loss(name, **kwargs):\n    if name not in _LOSSES:\n"
                 "        raise KeyError(f\"unknown loss {name}: {sorted(_LOSSES)}\")\n"
                 "    return _LOSSES[name](**kwargs)"))
    files[head] = text.replace(table, "").replace(
        "import torch.nn as nn\n", "import torch.nn as nn\n\nfrom slowfast.models.losses import build_loss\n").replace(
        'get_loss_func("bce")(reduction="mean")', 'build_loss("bce", reduction="mean")')
    return files, head


def test_builder_of_another_file_picks_bce():
    files, head = _split_loss()
    found = findings(lint_project(files, Settings.default()))
    assert [f for f in found if f[2] == "AMP102"] == [(head, 19, "AMP102")]


@pytest.mark.parametrize("old, new", [
    ('build_loss("bce", reduction="mean")', 'build_loss("bce_logit", reduction="mean")'),
    ('build_loss("bce", reduction="mean")', 'build_loss(cfg.LOSS, reduction="mean")'),
    ("    return _LOSSES[name](**kwargs)", "    _LOSSES.update(extra)\n    return _LOSSES[name](**kwargs)"),
])
def test_builder_of_another_file_not_bce_stays_silent(old, new):
    files, head = _split_loss()
    for path in files:
        files[path] = files[path].replace(old, new)
    assert "AMP102" not in {f[2] for f in findings(lint_project(files, Settings.default()))}


def test_function_of_another_file_that_never_applies_it():
    """InternImage's ops_dcnv3/functions/dcnv3_func.py defines the Function and holds no
    `.apply`: the module applying it imports it (function_entries.py looked only at files that
    apply or export `Cls.apply` themselves)."""
    files = load("chosen_core_op_dcnv4")
    text = files[DCN]
    function = text[text.index("class DCNv4Function(Function):"):text.index("class DCNv4(nn.Module):")]
    files["chosen_core_op_dcnv4/models/dcnv4_func.py"] = (
        "import torch\nfrom torch.autograd import Function\n\n\n" + function)
    files[DCN] = text.replace(function, "").replace(
        "from torch.autograd import Function\n", "from models.dcnv4_func import DCNv4Function\n")
    found = messages(lint_project(files, Settings.default()), "AMP151")
    assert len(found) == 1 and "DCNv4Function (defined at models/dcnv4_func.py:5)" in found[0]
