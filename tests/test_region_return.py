"""A region opened through a function that RETURNS the autocast context (facts/context_functions.py,
project/context_openers.py): `with f(...):` enters what `f` returns, in `f`'s own file or in another.

tests/projects/ctxret_openclip is laid out like mlfoundations/open_clip (src/open_clip/{model,loss}.py,
src/open_clip_train/{main,train,precision}.py with `get_autocast(precision, device_type)` and
`train_one_epoch`). open_clip's own `get_autocast` returns a partial that the caller calls; here it
returns the context itself (`with get_autocast(args.precision, device_type=...):`), with a
`nullcontext()` for full precision (maybe enabled). The region reaches open_clip/loss.py's
`F.binary_cross_entropy` on probabilities (AMP102); a backward moved inside the `with` is AMP104.
"""

from __future__ import annotations

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.regions import Enabled

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "ctxret_openclip"
AMP102 = ("src/open_clip/loss.py", 8, "AMP102")
IMPORT = "from .precision import get_autocast, get_input_dtype\n"
WITH = "        with get_autocast(args.precision, device_type=device.type):\n"
BACKWARD_INSIDE = ("            total_loss = siglip_loss(image_features, text_features, logit_scale, logit_bias)\n"
                   "        scaler.scale(total_loss).backward()\n",
                   "            total_loss = siglip_loss(image_features, text_features, logit_scale, logit_bias)\n"
                   "            scaler.scale(total_loss).backward()\n")
TRAIN_AMP104 = ("src/open_clip_train/train.py", 20, "AMP104")
FP16 = "        return torch.amp.autocast(device_type=device_type, dtype=torch.float16)\n"
BF16 = "        return torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)\n"


def findings(code, *edits):
    return code_findings(load(NAME, edits), code, SETTINGS)


def message_of(results, code):
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == code]
    return message


def test_the_region_reaches_the_loss_of_another_file():
    found, results = findings("AMP102")
    assert found == [AMP102]
    message = message_of(results, "AMP102")
    assert "get_autocast() at open_clip_train/train.py:17" in message
    assert "`get_autocast()` of open_clip_train/precision.py:6 returns the autocast at " \
           "open_clip_train/precision.py:8 on some paths" in message


def test_the_calling_file_sees_the_region_itself():
    assert findings("AMP104", BACKWARD_INSIDE)[0] == [TRAIN_AMP104]


@pytest.mark.parametrize("imported, written", [
    ("from open_clip_train.precision import get_autocast, get_input_dtype\n", "get_autocast"),
    ("from . import precision\nfrom .precision import get_input_dtype\n", "precision.get_autocast"),
    ("import open_clip_train.precision as prec\nfrom .precision import get_input_dtype\n", "prec.get_autocast"),
    ("from .precision import get_autocast as amp_ctx, get_input_dtype\n", "amp_ctx"),
])
def test_import_forms(imported, written):
    edits = ((IMPORT, imported), (WITH, WITH.replace("get_autocast(", f"{written}(")))
    assert findings("AMP102", *edits)[0] == [AMP102]
    shift = imported.count("\n") - 1
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == [(TRAIN_AMP104[0], 20 + shift, "AMP104")]


def test_every_return_an_autocast_is_enabled_not_maybe():
    found, results = findings("AMP102", ("    return nullcontext()\n", BF16.replace("    return", "return")))
    assert found == [AMP102]
    assert "on some paths" not in message_of(results, "AMP102")


def test_twin_with_the_logits_form_is_silent():
    assert findings("AMP102", ("F.binary_cross_entropy(torch.sigmoid(logits), labels)",
                               "F.binary_cross_entropy_with_logits(logits, labels)"))[0] == []


@pytest.mark.parametrize("edits", [
    # every path returns a null context or a disabled autocast
    ((FP16, "        return nullcontext()\n"),
     (BF16, BF16.replace("dtype=torch.bfloat16)", "dtype=torch.bfloat16, enabled=False)"))),
    # a generator: the `with` would not enter what it returns
    ((FP16, "        yield\n" + FP16),),
    # another function of the same name in the calling file
    ((IMPORT, "from contextlib import nullcontext\nfrom .precision import get_input_dtype\n\n\n"
              "def get_autocast(precision, device_type='cuda'):\n    return nullcontext()\n"),),
    # a parameter of that name
    (("def train_one_epoch(model, data, epoch, optimizer, scaler, args):\n",
      "def train_one_epoch(model, data, epoch, optimizer, scaler, args, get_autocast=None):\n"),),
    # the name bound again at module level
    ((IMPORT, IMPORT + "from contextlib import nullcontext as get_autocast\n"),),
])
def test_clean_twins_stay_silent(edits):
    assert findings("AMP102", *edits)[0] == []
    assert findings("AMP104", BACKWARD_INSIDE, *edits)[0] == []


def regions_of(source):
    module = cst.parse_module(source)
    facts = FileFacts(module)
    return [(module.code_for_node(w.items[0].item), r.enabled)
            for w, _, r in facts.regions.explicit_regions() if r.opener is not None]


SAME_FILE = (
    "from contextlib import nullcontext\n"
    "import torch\n"
    "def amp(device_type):\n"
    "    return nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type)\n"
    "def fp16():\n"
    "    return torch.autocast('cuda', dtype=torch.float16)\n"
    "def off():\n"
    "    return torch.autocast('cuda', enabled=False)\n"
    "def plain():\n"
    "    return nullcontext()\n"
    "def bare(flag):\n"
    "    if flag:\n"
    "        return\n"
    "    return torch.autocast('cuda')\n"
    "class Trainer:\n"
    "    def autocast_ctx(self):\n"
    "        return torch.cuda.amp.autocast(enabled=self.use_amp)\n"
    "    def fixed(self):\n"
    "        return fp16()\n"
    "    def step(self, model, x):\n"
    "        with amp('cuda'):\n"
    "            model(x).mean().backward()\n"
    "        with fp16():\n"
    "            model(x).mean().backward()\n"
    "        with self.autocast_ctx():\n"
    "            model(x).mean().backward()\n"
    "        with self.fixed():\n"
    "            model(x).mean().backward()\n"
    "        with off():\n"
    "            model(x).mean().backward()\n"
    "        with plain():\n"
    "            model(x).mean().backward()\n"
    "        with bare(True):\n"
    "            model(x).mean().backward()\n"
)


def test_same_file_functions_and_methods():
    """Without the project pass: enabled, maybe enabled (a null context on one branch, an
    `enabled=` that is not a literal), through another returning function; nothing for a null
    context, a disabled autocast, or a bare `return` on some path."""
    assert regions_of(SAME_FILE) == [("amp('cuda')", Enabled.MAYBE), ("fp16()", Enabled.TRUE),
                                      ("self.autocast_ctx()", Enabled.MAYBE), ("self.fixed()", Enabled.TRUE),
                                      ("off()", Enabled.FALSE)]
    lines = [d.line for d in lint_source("t.py", SAME_FILE, SETTINGS).diagnostics if d.code == "AMP104"]
    assert lines == [22, 24, 26, 28]


def test_a_subclass_override_makes_the_region_maybe():
    """The reviewer's case: `self.ctx()` of a base class whose subclass (same file) overrides
    `ctx` with one that opens nothing: the runtime class may be either, so maybe enabled
    (both for a returning method and a @contextmanager one)."""
    source = (
        "import contextlib\n"
        "import torch\n"
        "class Base:\n"
        "    def ctx(self):\n"
        "        return torch.autocast('cuda')\n"
        "    @contextlib.contextmanager\n"
        "    def gen(self):\n"
        "        with torch.autocast('cuda'):\n"
        "            yield\n"
        "    def step(self, model, x):\n"
        "        with self.ctx():\n"
        "            model(x).mean().backward()\n"
        "        with self.gen():\n"
        "            model(x).mean().backward()\n"
        "class Mid(Base):\n"
        "    pass\n"
        "class FP32(Mid):\n"
        "    def ctx(self):\n"
        "        return contextlib.nullcontext()\n"
        "    @contextlib.contextmanager\n"
        "    def gen(self):\n"
        "        yield\n"
    )
    assert regions_of(source) == [("self.ctx()", Enabled.MAYBE), ("self.gen()", Enabled.MAYBE)]
    same = source.replace("        return contextlib.nullcontext()\n", "        return torch.autocast('cuda')\n")
    head, tail = same.rsplit("        yield\n", 1)
    same = head + "        with torch.autocast('cuda'):\n            yield\n" + tail
    assert regions_of(same) == [("self.ctx()", Enabled.TRUE), ("self.gen()", Enabled.TRUE)]


def test_no_fix_edits_the_returned_context():
    source = "import torch\ndef amp():\n    return torch.autocast('cuda')\n" \
             "def step(model, x):\n    with amp():\n        loss = model(x).mean()\n        loss.backward()\n"
    (found,) = [d for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP104"]
    assert found.fix is None


def test_warm_run_follows_an_edit_of_the_returning_function_only(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "src/open_clip_train/precision.py",
        ((FP16, "        return nullcontext()\n"), (BF16, "        return nullcontext()\n")),
        "AMP102", [AMP102])


def test_a_returned_disabled_autocast_turns_an_outer_region_off():
    """`fp32()` returns `autocast(enabled=False)`: inside an outer region its body runs without
    autocast (no AMP102), the same as a literal `with torch.autocast(..., enabled=False):`; the
    same for a @contextmanager that yields under one."""
    source = (
        "import contextlib\n"
        "import torch\n"
        "import torch.nn.functional as F\n"
        "def fp32():\n"
        "    return torch.autocast('cuda', enabled=False)\n"
        "@contextlib.contextmanager\n"
        "def fp32_gen():\n"
        "    with torch.autocast('cuda', enabled=False):\n"
        "        yield\n"
        "def step(model, x, t):\n"
        "    with torch.autocast('cuda'):\n"
        "        p = torch.sigmoid(model(x))\n"
        "        with fp32():\n"
        "            a = F.binary_cross_entropy(p.float(), t)\n"
        "        with fp32_gen():\n"
        "            b = F.binary_cross_entropy(p.float(), t)\n"
        "        c = F.binary_cross_entropy(p, t)\n"
    )
    lines = [d.line for d in lint_source("t.py", source, SETTINGS).diagnostics if d.code == "AMP102"]
    assert lines == [17]


MAYBE_AUTOCAST = (
    "from contextlib import nullcontext\n"
    "def maybe_autocast(device_type, dtype=None, enabled=True, cache_enabled=None):\n"
    "    import torch\n"
    "    if device_type == 'meta':\n"
    "        return nullcontext()\n"
    "    if torch.is_autocast_enabled(device_type) or enabled:\n"
    "        return torch.autocast(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)\n"
    "    else:\n"
    "        return nullcontext()\n"
)
ROTARY = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from ...utils.generic import maybe_autocast\n"
    "def rotary(x, t, device_type):\n"
    "    with maybe_autocast(device_type=device_type, enabled=False):\n"
    "        a = F.binary_cross_entropy(torch.sigmoid(x), t)\n"
    "    with maybe_autocast(device_type, None, False):\n"
    "        b = F.binary_cross_entropy(torch.sigmoid(x), t)\n"
    "    with maybe_autocast('cuda'):\n"
    "        c = F.binary_cross_entropy(torch.sigmoid(x), t)\n"
    "    with maybe_autocast('cuda', enabled=True):\n"
    "        d = F.binary_cross_entropy(torch.sigmoid(x), t)\n"
    "    return a, b, c, d\n"
)


@pytest.mark.parametrize("same_file", [True, False])
def test_an_enabled_parameter_passed_false_opens_it_disabled(same_file):
    """transformers' utils/generic.py `maybe_autocast(device_type, dtype=None, enabled=True)`
    returns `torch.autocast(..., enabled=enabled)` (or a null context): its rotary embeddings'
    `with maybe_autocast(device_type=..., enabled=False):` force float32 there. The call's
    literal `False` for that parameter opens the region disabled (silent), by keyword or
    position; the default and `enabled=True` stay maybe enabled."""
    if same_file:
        files = {"t/models/llama/modeling_llama.py": MAYBE_AUTOCAST + ROTARY.replace(
            "from ...utils.generic import maybe_autocast\n", "")}
        offset = MAYBE_AUTOCAST.count("\n") - 1
    else:
        files = {"t/__init__.py": "", "t/utils/__init__.py": "", "t/models/__init__.py": "",
                 "t/models/llama/__init__.py": "", "t/utils/generic.py": MAYBE_AUTOCAST,
                 "t/models/llama/modeling_llama.py": ROTARY}
        offset = 0
    found, _ = code_findings(files, "AMP102", SETTINGS)
    assert [line - offset for _, line, _ in found] == [10, 12]


def test_a_file_whose_every_call_passes_enabled_false_is_not_parsed(monkeypatch):
    """Cost (counts, not time): a calling file whose every `maybe_autocast(...)` passes a literal
    `enabled=False` only ever gets disabled regions; the project pass does not `ast`-parse it
    for its `with` items (transformers: 24 modeling files). A file with an enabled call is."""
    from amplint.analysis.project import context_openers

    parsed = []
    original = context_openers._with_calls
    monkeypatch.setattr(context_openers, "_with_calls", lambda text: parsed.append(text) or original(text))
    rotary = ROTARY + "# the cost probe's copy\n"  # texts no earlier test linted (content caches)
    only_off = ROTARY.split("    with maybe_autocast(device_type, None, False):\n")[0] + "    return a\n"
    files = {"t/__init__.py": "", "t/utils/__init__.py": "", "t/models/__init__.py": "",
             "t/models/llama/__init__.py": "", "t/utils/generic.py": MAYBE_AUTOCAST,
             "t/models/llama/modeling_llama.py": rotary, "t/models/llama/rotary_off.py": only_off}
    code_findings(files, "AMP102", SETTINGS)
    assert rotary in parsed and only_off not in parsed
    assert context_openers._all_disabled(only_off, "maybe_autocast", {(2, "enabled")})
    assert not context_openers._all_disabled(ROTARY, "maybe_autocast", {(2, "enabled")})
    assert not context_openers._all_disabled(only_off + "import x.maybe_autocast as m\n", "maybe_autocast",
                                             {(2, "enabled")})
