"""A region opened through an opener FACTORY (facts/opener_factories.py,
project/context_factories.py): a function whose every `return` is `partial(torch.amp.autocast,
...)` (or `suppress`, a path without a region), bound to a local that the caller then calls:
`autocast = get_autocast(...)`, `with autocast():`. In the factory's own file or in another.

tests/projects/ctxfactory_openclip is laid out like mlfoundations/open_clip
(src/open_clip/{model,loss}.py, src/open_clip_train/{main,train,precision}.py), with open_clip's
own `get_autocast(precision, device_type)` shape: a partial for "amp", a bfloat16 partial for
"amp_bf16", `suppress` otherwise (maybe enabled), and `train_one_epoch` opening it around the
model and a distillation loss of open_clip/loss.py that takes `F.binary_cross_entropy` of
probabilities (AMP102). A backward moved inside the `with` is AMP104 in train.py.
"""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.regions import Enabled

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "ctxfactory_openclip"
AMP102 = ("src/open_clip/loss.py", 8, "AMP102")
IMPORT = "from .precision import get_autocast, get_input_dtype\n"
BIND = "    autocast = get_autocast(args.precision, device_type=device.type)\n"
WITH = "        with autocast():\n"
BACKWARD_INSIDE = ("            total_loss = distill_loss(image_features, text_features, logit_scale, teacher_logits)\n"
                   "        scaler.scale(total_loss).backward()\n",
                   "            total_loss = distill_loss(image_features, text_features, logit_scale, teacher_logits)\n"
                   "            scaler.scale(total_loss).backward()\n")
TRAIN_AMP104 = ("src/open_clip_train/train.py", 23, "AMP104")
FP16 = "        return partial(torch.amp.autocast, device_type=device_type)\n"
BF16 = "        return partial(torch.amp.autocast, device_type=device_type, dtype=torch.bfloat16)\n"
PLAIN = "        return suppress\n"


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def message_of(results, code):
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == code]
    return message


def test_the_region_reaches_the_loss_of_another_file():
    found, results = findings("AMP102")
    assert found == [AMP102]
    message = message_of(results, "AMP102")
    assert "autocast() at open_clip_train/train.py:18 (autocast <- get_autocast(...); `get_autocast()` of " \
           "open_clip_train/precision.py:7 returns a partial of the autocast at " in message
    assert "on some paths" in message


def test_the_calling_file_sees_the_region_itself():
    assert findings("AMP104", BACKWARD_INSIDE)[0] == [TRAIN_AMP104]


@pytest.mark.parametrize("imported, written", [
    ("from open_clip_train.precision import get_autocast, get_input_dtype\n", "get_autocast"),
    ("from . import precision\nfrom .precision import get_input_dtype\n", "precision.get_autocast"),
    ("from .precision import get_autocast as amp_factory, get_input_dtype\n", "amp_factory"),
])
def test_import_forms(imported, written):
    edits = ((IMPORT, imported), (BIND, BIND.replace("get_autocast(", f"{written}(")))
    assert findings("AMP102", *edits)[0] == [AMP102]
    shift = imported.count("\n") - 1
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == [(TRAIN_AMP104[0], 23 + shift, "AMP104")]


def test_every_return_a_partial_is_enabled_and_disagreeing_dtypes_are_unknown():
    found, results = findings("AMP102", ("    else:\n" + PLAIN, ""))
    assert found == [AMP102]
    assert "on some paths" not in message_of(results, "AMP102")
    files = load(NAME, (("    else:\n" + PLAIN, ""),))
    (region,) = _train_regions(files)
    assert (region.enabled, region.dtype) == (Enabled.TRUE, None)  # float16 or bfloat16: not known
    files = load(NAME, (("    else:\n" + PLAIN, ""), (FP16, BF16)))
    (region,) = _train_regions(files)
    assert region.dtype == "bfloat16"


def _train_regions(files):
    from amplint.analysis.project import lint_project

    captured = []
    import amplint.analysis.facts.regions as regions_module

    original = regions_module.RegionAnalysis.__init__

    def spy(self, tree, entries=()):
        original(self, tree, entries)
        if any(getattr(e, "factory", False) for e in entries):
            captured.extend(r for _, _, r in self.explicit_regions() if r.opener is not None)

    regions_module.RegionAnalysis.__init__ = spy
    try:
        lint_project(files, SETTINGS)
    finally:
        regions_module.RegionAnalysis.__init__ = original
    return captured


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("F.binary_cross_entropy(torch.sigmoid(logits), targets)",
                               "F.binary_cross_entropy_with_logits(logits, targets)"))[0] == []


@pytest.mark.parametrize("edits", [
    # every path returns a plain context (or a disabled partial): no region
    ((FP16, PLAIN), (BF16, BF16.replace("dtype=torch.bfloat16)", "dtype=torch.bfloat16, enabled=False)"))),
    # some path returns a value not known to open a region, or to open none
    ((PLAIN, "        return make_ctx\n"),),
    # the call passes arguments: they may override `enabled=` or the dtype
    ((WITH, "        with autocast(enabled=args.amp):\n"),),
    # the local is bound again in the function
    ((BIND, BIND + "    if args.fp32:\n        autocast = get_input_dtype\n"),),
    # the local is a parameter
    (("def train_one_epoch(model, teacher, data, epoch, optimizer, scaler, args):\n",
      "def train_one_epoch(model, teacher, data, epoch, optimizer, scaler, args, autocast=None):\n"),),
    # the factory's value entered itself (a partial is no context manager)
    ((WITH, "        with get_autocast(args.precision):\n"),),
    # another function of the same name in the calling file
    ((IMPORT, "from contextlib import suppress\nfrom .precision import get_input_dtype\n\n\n"
              "def get_autocast(precision, device_type='cuda'):\n    return suppress\n"),),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


SAME_FILE = (
    "import functools\n"
    "from contextlib import nullcontext\n"
    "import torch\n"
    "def get_autocast(precision):\n"
    "    if precision == 'amp':\n"
    "        return functools.partial(torch.amp.autocast, 'cuda')\n"
    "    return nullcontext\n"
    "def bf16():\n"
    "    return functools.partial(torch.autocast, device_type='cuda', dtype=torch.bfloat16)\n"
    "def unknown(flag):\n"
    "    return functools.partial(torch.autocast, 'cuda') if flag else flag\n"
    "def step(model, x, precision):\n"
    "    autocast = get_autocast(precision)\n"
    "    with autocast():\n"
    "        model(x).mean().backward()\n"
    "    ctx = bf16()\n"
    "    with ctx():\n"
    "        model(x).mean().backward()\n"
    "    other = unknown(precision)\n"
    "    with other():\n"
    "        model(x).mean().backward()\n"
)


def regions_of(source):
    module = cst.parse_module(source)
    facts = FileFacts(module)
    return [(module.code_for_node(w.items[0].item), r.enabled, r.dtype)
            for w, _, r in facts.regions.explicit_regions() if r.opener is not None]


def test_same_file_factories():
    """Without the project pass: maybe enabled (a plain context on one path), enabled with the
    partial's dtype; nothing for a return not known to be a factory."""
    assert regions_of(SAME_FILE) == [("autocast()", Enabled.MAYBE, "float16"),
                                      ("ctx()", Enabled.TRUE, "bfloat16")]
    lines = [d.line for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics if d.code == "AMP104"]
    assert lines == [15, 18]
    (found,) = [d for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics
                if d.code == "AMP104" and d.line == 15]
    assert found.fix is None  # the fixes do not edit a factory's partial
