"""Files whose entries are all EntryHalf (issue 34): the rules that read no half class
(data/triggers.HALF_BLIND) are prefiltered there as in a file without entries, so a module file
another file makes half is parsed by LibCST only when a rule that reads half classes can fire.

The project imitates fairseq (facebookresearch/fairseq): `fairseq/modules/adaptive_softmax.py`
defines `TiedLinear` and an `AdaptiveSoftmax` that runs `self.apply(init_weights)`, and
`fairseq/distributed/tpu_distributed_data_parallel.py` a wrapper whose `all_reduce_grads` names
`backward` hooks; `examples/generate.py` turns both half. Counted, not timed."""

from __future__ import annotations

import pytest

import amplint.analysis.engine as engine
from amplint.analysis.data.triggers import ENTRY_BLIND, ENTRY_NEEDS, HALF_BLIND
from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project
from amplint.analysis.rules import all_rules

SOFTMAX = (
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n\n\n"
    "def init_weights(m):\n"
    "    if isinstance(m, nn.Linear):\n"
    "        nn.init.xavier_uniform_(m.weight)\n\n\n"
    "class TiedLinear(nn.Module):\n"
    "    def __init__(self, weight, transpose):\n"
    "        super().__init__()\n"
    "        self.weight = weight\n"
    "        self.transpose = transpose\n\n"
    "    def forward(self, input):\n"
    "        return F.linear(input, self.weight.t() if self.transpose else self.weight)\n\n\n"
    "class AdaptiveSoftmax(nn.Module):\n"
    "    def __init__(self, vocab_size, input_dim):\n"
    "        super().__init__()\n"
    "        self.head = nn.Linear(input_dim, vocab_size, bias=False)\n"
    "        self.apply(init_weights)\n\n"
    "    def forward(self, input):\n"
    "        return self.head(input)\n"
)
TPU = (
    "import torch\n"
    "from torch import nn\n\n\n"
    "class TPUDistributedDataParallel(nn.Module):\n"
    "    def __init__(self, module, process_group):\n"
    "        super().__init__()\n"
    "        self.module = module\n"
    "        self.process_group = process_group\n\n"
    "    def forward(self, *inputs, **kwargs):\n"
    "        return self.module(*inputs, **kwargs)\n\n"
    "    def all_reduce_grads(self):\n"
    "        gradients = []\n"
    "        for p in self.parameters():\n"
    "            if p.grad is not None:  # set by backward\n"
    "                gradients.append(p.grad)\n"
    "        torch.distributed.all_reduce(gradients[0], group=self.process_group)\n"
)
GENERATE = (
    "import torch\n"
    "from fairseq.modules.adaptive_softmax import AdaptiveSoftmax, TiedLinear\n"
    "from fairseq.distributed.tpu_distributed_data_parallel import TPUDistributedDataParallel\n\n\n"
    "def main(weight):\n"
    "    proj = TiedLinear(weight, transpose=False).half()\n"
    "    softmax = AdaptiveSoftmax(100, 16).half()\n"
    "    model = TPUDistributedDataParallel(softmax, None).half()\n"
    "    return proj, model\n"
)
FILES = {
    "fairseq/__init__.py": "",
    "fairseq/modules/__init__.py": "",
    "fairseq/modules/adaptive_softmax.py": SOFTMAX,
    "fairseq/distributed/__init__.py": "",
    "fairseq/distributed/tpu_distributed_data_parallel.py": TPU,
    "examples/generate.py": GENERATE,
}
CLEAN = dict(FILES, **{"examples/generate.py": GENERATE.replace(".half()", "")})  # nothing made half

# a Function applied under the file's own region: AMP151 fires whatever the entries
CUSTOM = (
    "\n\nclass MatMul(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, a, b):\n"
    "        ctx.save_for_backward(a, b)\n"
    "        return a.mm(b)\n\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        a, b = ctx.saved_tensors\n"
    "        return grad.mm(b.t()), a.t().mm(grad)\n\n\n"
    "def project(a, b):\n"
    "    with torch.autocast('cuda', dtype=torch.float16):\n"
    "        return MatMul.apply(a, b)\n"
)


def _lint(files):
    """(results, path -> entry kinds, path -> LibCST parses made while linting it)."""
    kinds, parses, linting = {}, {}, []
    real_parse, real_lint = engine.parse, engine.lint_source

    def parse(source, *args, **kwargs):
        if linting:
            parses[linting[-1]] = parses.get(linting[-1], 0) + 1
        return real_parse(source, *args, **kwargs)

    def lint(path, source, settings, *args, **kwargs):
        entries = kwargs.get("entries", ())
        if entries and not kwargs.get("summarize"):
            kinds[path] = sorted({type(e).__name__ for e in entries})
        linting.append(path)
        try:
            return real_lint(path, source, settings, *args, **kwargs)
        finally:
            linting.pop()

    engine.parse, engine.lint_source = parse, lint
    try:
        results = lint_project(files, Settings.default())
    finally:
        engine.parse, engine.lint_source = real_parse, real_lint
    return results, kinds, parses


def test_half_classes_files_that_only_name_apply_or_backward_are_not_parsed():
    """adaptive_softmax.py names `apply` (AMP151's requirement), tpu_distributed_data_parallel.py
    `backward` (AMP104's); neither rule reads a half class. Main parses both (2 parses)."""
    results, kinds, parses = _lint(FILES)
    half = ["fairseq/modules/adaptive_softmax.py", "fairseq/distributed/tpu_distributed_data_parallel.py"]
    assert {path: kinds.get(path) for path in half} == {path: ["EntryHalf"] for path in half}
    assert sum(parses.get(path, 0) for path in half) == 0, parses
    for path in half:
        assert results[path].diagnostics == [] and results[path].errors == []


def test_the_clean_twin_gives_no_entries_and_no_finding():
    results, kinds, _ = _lint(CLEAN)
    assert kinds == {}
    assert all(not result.diagnostics for result in results.values())


def test_a_hazard_of_a_rule_that_reads_no_half_class_is_still_parsed_and_found():
    files = dict(FILES, **{"fairseq/modules/adaptive_softmax.py": "import torch\n" + SOFTMAX + CUSTOM})
    results, kinds, parses = _lint(files)
    path = "fairseq/modules/adaptive_softmax.py"
    assert kinds[path] == ["EntryHalf"]
    assert parses.get(path, 0) >= 1
    assert "AMP151" in [d.code for d in results[path].diagnostics]


def test_a_region_entry_beside_keeps_the_whole_file_requirements():
    """HALF_BLIND holds only where every entry is EntryHalf: with an EntryRegion too, AMP151's
    requirement (`apply` in code) keeps the file."""
    from amplint.analysis.facts.region_entries import EntryHalf, EntryRegion
    from amplint.analysis.facts.regions import Enabled
    from amplint.analysis.prefilter import could_match

    rules = [all_rules()["AMP151"]]
    half = (EntryHalf("AdaptiveSoftmax", "float16", "softmax <- AdaptiveSoftmax() made half"),)
    region = (EntryRegion("init_weights", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)
    assert not could_match(SOFTMAX, rules, half)
    assert could_match(SOFTMAX, rules, half + region)


@pytest.mark.parametrize("code", HALF_BLIND)
def test_half_blind_rules_are_rules_with_entry_requirements(code):
    assert code in ENTRY_NEEDS and code not in ENTRY_BLIND


# -- the code a half class makes fp16 code (AMP101, AMP141: data/triggers REACHED) -------------
# fairseq/distributed/legacy_distributed_data_parallel.py's shape: the half wrapper names no
# reduction; a module-level helper of the file sums gradients' norms.
LEGACY = (
    "import torch\n"
    "from torch import nn\n\n\n"
    "def grad_norm(params):\n"
    "    total = torch.zeros(1)\n"
    "    for p in params:\n"
    "        total = total + (p.grad * p.grad).sum()\n"
    "    return total.sqrt()\n\n\n"
    "class LegacyDistributedDataParallel(nn.Module):\n"
    "    def __init__(self, module, buffer_size=2 ** 28):\n"
    "        super().__init__()\n"
    "        self.module = module\n"
    "        self.buffer_size = buffer_size\n\n"
    "    def forward(self, *inputs, **kwargs):\n"
    "        return self.module(*inputs, **kwargs)\n"
)
WRAP = (
    "from fairseq.distributed.legacy_distributed_data_parallel import LegacyDistributedDataParallel\n\n\n"
    "def build(model):\n"
    "    return LegacyDistributedDataParallel(model).half()\n"
)
LEGACY_PATH = "fairseq/distributed/legacy_distributed_data_parallel.py"
# a hand-written softmax in a method (AMP141's first must-flag example, in fp16 code)
SOFTMAX_METHOD = (
    "    def attend(self, q, k):\n"
    "        scores = q @ k.transpose(-1, -2)\n"
    "        return scores.exp() / scores.exp().sum(-1, keepdim=True)\n"
)
# a factory in fp16 code (AMP101's second must-flag example)
MASK_METHOD = (
    "    def masked(self, x):\n"
    "        mask = torch.ones(x.shape[0], device=x.device, requires_grad=False)\n"
    "        return x * mask\n"
)


def _legacy(text):
    return {"fairseq/__init__.py": "", "fairseq/distributed/__init__.py": "", LEGACY_PATH: text,
            "fairseq_cli/train.py": WRAP}


def test_a_reduction_and_a_factory_outside_the_half_classes_keep_no_file_for_libcst():
    """`sum` and `zeros` sit only in `grad_norm`, outside the half class: main parses the file
    (1 parse), AMP101/AMP141 cannot fire there (fp16 code is the half classes' methods)."""
    results, kinds, parses = _lint(_legacy(LEGACY))
    assert kinds[LEGACY_PATH] == ["EntryHalf"]
    assert parses.get(LEGACY_PATH, 0) == 0, parses
    assert results[LEGACY_PATH].diagnostics == []


@pytest.mark.parametrize("method,code", [(SOFTMAX_METHOD, "AMP141"), (MASK_METHOD, "AMP101")])
def test_a_hazard_in_a_half_class_method_is_parsed_and_found(method, code):
    results, kinds, parses = _lint(_legacy(LEGACY + "\n" + method))
    assert kinds[LEGACY_PATH] == ["EntryHalf"]
    assert parses.get(LEGACY_PATH, 0) >= 1
    assert code in [d.code for d in results[LEGACY_PATH].diagnostics]


@pytest.mark.parametrize("method,code", [(SOFTMAX_METHOD, "AMP141"), (MASK_METHOD, "AMP101")])
def test_a_hazard_in_a_submodule_class_the_half_class_builds_is_parsed_and_found(method, code):
    """`self.bucket = GradBucket(...)` in the half class: `.half()` converts it too (Fp16Analysis
    `_add_submodules`), so GradBucket's methods are fp16 code."""
    sub = "class GradBucket(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n" + method
    text = LEGACY.replace("class Legacy", sub + "\n\nclass Legacy").replace(
        "        self.buffer_size = buffer_size\n",
        "        self.buffer_size = buffer_size\n        self.bucket = GradBucket()\n")
    results, kinds, parses = _lint(_legacy(text))
    assert kinds[LEGACY_PATH] == ["EntryHalf"]
    assert parses.get(LEGACY_PATH, 0) >= 1
    assert code in [d.code for d in results[LEGACY_PATH].diagnostics]


def test_the_half_classes_reach_the_classes_their_bodies_name():
    from amplint.analysis.prefilter_entries import CodeNames

    text = (
        "class A:\n    def f(self):\n        self.b = B()\n\n"
        "class B:\n    def g(self, x):\n        return x.sum()\n\n"
        "class C:\n    def h(self, x):\n        return x.mean()\n\n"
        "def free(x):\n    return x.var()\n"
    )
    code = CodeNames.of(text)
    assert {"sum"} <= code.half_reached(("A",)) and "mean" not in code.half_reached(("A",))
    assert "var" not in code.half_reached(("A", "C")) and "mean" in code.half_reached(("A", "C"))
    assert code.half_reached(("Missing",)) == frozenset()


def test_the_half_classes_reach_the_functions_their_bodies_call():
    """float16_scope.float16_callees walks `helper` and `inner` (a float16 module's method calls
    them with its float16 values): the prefilter keeps what they name; `free` stays out."""
    from amplint.analysis.prefilter_entries import CodeNames

    text = (
        "class A:\n    def forward(self, x):\n        return helper(x)\n\n"
        "def helper(x):\n    return inner(x) * 2\n\n"
        "def inner(x):\n    return x.pow(2).sum(-1)\n\n"
        "def free(x):\n    return x.var()\n"
    )
    code = CodeNames.of(text)
    assert {"pow", "sum"} <= code.half_reached(("A",))
    assert "var" not in code.half_reached(("A",))


# -- AMP110 (data/triggers HALF_OR_BLIND): fairseq/models/xmod/transformer_layer_xmod.py's shape --
XMOD = (
    "import torch\n"
    "from torch import nn\n\n\n"
    "def pad_scores(scores, mask):\n"
    "    return scores.masked_fill(mask, -1e8)\n\n\n"
    "class XMODTransformerEncoderLayerBase(nn.Module):\n"
    "    def __init__(self, dim):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(dim, dim)\n\n"
    "    def forward(self, x, mask):\n"
    "        return self.fc(x)\n"
)
XMOD_PATH = "fairseq/models/xmod/transformer_layer_xmod.py"
XMOD_TRAIN = (
    "from fairseq.models.xmod.transformer_layer_xmod import XMODTransformerEncoderLayerBase\n\n\n"
    "def build(dim):\n"
    "    return XMODTransformerEncoderLayerBase(dim).half()\n"
)


def _xmod(text):
    return {"fairseq/__init__.py": "", "fairseq/models/__init__.py": "", "fairseq/models/xmod/__init__.py": "",
            XMOD_PATH: text, "fairseq_cli/train.py": XMOD_TRAIN}


def test_a_constant_fill_outside_the_half_classes_keeps_no_file_for_libcst():
    """`masked_fill(mask, -1e8)` only in a module-level helper: AMP110 fires there only with a
    region or a half cast of the file (none). Main parses the file (1 parse)."""
    results, kinds, parses = _lint(_xmod(XMOD))
    assert kinds[XMOD_PATH] == ["EntryHalf"]
    assert parses.get(XMOD_PATH, 0) == 0, parses
    assert results[XMOD_PATH].diagnostics == []


def test_a_constant_fill_in_a_half_class_method_is_parsed_and_found():
    text = XMOD.replace("        return self.fc(x)\n", "        return self.fc(x).masked_fill(mask, -1e8)\n")
    results, kinds, parses = _lint(_xmod(text))
    assert parses.get(XMOD_PATH, 0) >= 1
    assert [d.code for d in results[XMOD_PATH].diagnostics] == ["AMP110"]


def test_a_function_named_like_the_half_class_keeps_the_whole_file_requirement():
    """param_defaults drops the defaults of a function whose scope key is an entry's target:
    there the narrower test is not used."""
    from amplint.analysis.facts.region_entries import EntryHalf
    from amplint.analysis.prefilter import could_match

    rules = [all_rules()["AMP110"]]
    half = (EntryHalf("XMODTransformerEncoderLayerBase", "float16", "made half"),)
    assert not could_match(XMOD, rules, half)
    named = XMOD + "\n\ndef XMODTransformerEncoderLayerBase_():\n    pass\n"
    assert not could_match(named, rules, half)
    named = XMOD.replace("def pad_scores", "def XMODTransformerEncoderLayerBase")
    assert could_match(named, rules, half)
