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
    from amplint.analysis.facts.regions import Enabled, EntryHalf, EntryRegion
    from amplint.analysis.prefilter import could_match

    rules = [all_rules()["AMP151"]]
    half = (EntryHalf("AdaptiveSoftmax", "float16", "softmax <- AdaptiveSoftmax() made half"),)
    region = (EntryRegion("init_weights", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)
    assert not could_match(SOFTMAX, rules, half)
    assert could_match(SOFTMAX, rules, half + region)


@pytest.mark.parametrize("code", HALF_BLIND)
def test_half_blind_rules_are_rules_with_entry_requirements(code):
    assert code in ENTRY_NEEDS and code not in ENTRY_BLIND
