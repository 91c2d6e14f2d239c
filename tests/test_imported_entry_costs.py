"""What the imported-constant search (AMP110 across files, project/imported_constants.py) reads
on a project where many files import from the same modules (issue 34): counted, not timed; and
the quick text tests of the imported entries (fill names, half dtype literals of dataclass
fields) answering as the patterns they stand for.

A generated project in OpenNMT-py's layout: onmt/constants.py holds `MASK_VALUE = 1e18`,
onmt/utils/misc.py helpers, and each of k attention modules under onmt/modules/ imports both and
masks its scores with `-MASK_VALUE` (float16 under train.py's autocast: AMP110). k encoders under
onmt/encoders/ import the same helpers and fill nothing. transformers has this shape at scale:
~440 files that fill import ~3,000 names, most from a handful of modules (modeling_utils,
utils/__init__), and the base code searched the defining module's text once per importing file
(and every one of the 2,912 texts for the fill names with a slow pattern)."""

from __future__ import annotations

import collections

import pytest

from amplint.analysis.project import build
from amplint.analysis.project import imported_constants

CONSTANTS = "MASK_VALUE = 1e18\nPAD_WORD = '<blank>'\n"
MISC = """import torch


def aeq(*args):
    first = args[0]
    assert all(arg == first for arg in args[1:])


def sequence_mask(lengths, max_len=None):
    max_len = max_len or int(lengths.max())
    return torch.arange(max_len, device=lengths.device) < lengths.unsqueeze(1)
"""
ATTENTION = """import torch
import torch.nn as nn

from onmt.constants import MASK_VALUE
from onmt.utils.misc import aeq, sequence_mask


class MultiHeadedAttention{i}(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)

    def forward(self, x, lengths):
        aeq(x.size(0), lengths.size(0))
        scores = torch.matmul(self.query(x), self.key(x).transpose(1, 2))
        mask = ~sequence_mask(lengths, x.size(1)).unsqueeze(1)
        scores = scores.masked_fill(mask, -MASK_VALUE)
        return torch.softmax(scores, -1)
"""
ENCODER = """import torch.nn as nn

from onmt.utils.misc import aeq, sequence_mask


class RNNEncoder{i}(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rnn = nn.LSTM(dim, dim, batch_first=True)

    def forward(self, x, lengths):
        aeq(x.size(0), lengths.size(0))
        return self.rnn(x)[0] * sequence_mask(lengths).unsqueeze(-1)
"""
TRAIN = """import torch

from onmt.modules.attn0 import MultiHeadedAttention0


def train(batches, dim):
    model = MultiHeadedAttention0(dim).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    scaler = torch.cuda.amp.GradScaler()
    for x, lengths in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x.cuda(), lengths.cuda()).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
"""


ROOT = "opennmt_fork"


def _files(k: int):
    files = {"onmt/__init__.py": "", "onmt/constants.py": CONSTANTS, "onmt/utils/__init__.py": "",
             "onmt/utils/misc.py": MISC, "onmt/modules/__init__.py": "", "onmt/encoders/__init__.py": "",
             "train.py": TRAIN}
    for i in range(k):
        files[f"onmt/modules/attn{i}.py"] = ATTENTION.replace("{i}", str(i))
        files[f"onmt/encoders/rnn{i}.py"] = ENCODER.replace("{i}", str(i))
    return {f"{ROOT}/{path}": text for path, text in files.items()}


class _Reads(dict):
    """The project's texts, counting who reads which."""

    def __init__(self, files):
        super().__init__(files)
        self.reads = collections.Counter()

    def get(self, path, default=None):
        self.reads[path] += 1
        return super().get(path, default)


def _search(monkeypatch, k: int):
    project = build(_files(k))
    project.summarise(project.python)  # as on transformers, where ~440 files that fill are summarised
    project.files = reads = _Reads(project.files)
    searched = collections.Counter()
    fills = imported_constants._FILLS

    class Counting:
        def search(self, text, *args):
            searched[text] += 1
            return fills.search(text, *args)

    monkeypatch.setattr(imported_constants, "_FILLS", Counting())
    return imported_constants.constant_entries(project, project.python), reads.reads, searched


@pytest.mark.parametrize("k", [4, 16])
def test_a_module_many_files_import_from_is_read_once_per_name(monkeypatch, k):
    found, reads, _ = _search(monkeypatch, k)
    assert sorted(found) == [f"{ROOT}/onmt/modules/attn{i}.py" for i in sorted(range(k), key=str)]
    for entries in found.values():
        assert [(e.target, e.value, e.cite) for e in entries] == [("MASK_VALUE", 1e18, "onmt/constants.py:1")]
    # each text is read once as an importer; then constants.py once for MASK_VALUE's binding and
    # once for its value, misc.py once for each of its two names (base: once per importing
    # file: k + 2 and 2k + 1)
    assert reads[f"{ROOT}/onmt/constants.py"] == 3
    assert reads[f"{ROOT}/onmt/utils/misc.py"] == 3


def test_a_text_that_fills_nothing_is_not_searched_for_the_fill_names(monkeypatch):
    files = _files(8)
    _, _, searched = _search(monkeypatch, 8)
    fill_texts = {text for text in files.values() if "masked_fill(" in text}
    assert set(searched) == fill_texts  # base: every text of the project, encoders included
    assert all(count == 1 for count in searched.values())


@pytest.mark.parametrize("text", [
    "x.masked_fill(m, v)", "x.masked_fill_ (m, v)", "index_fill_(x, 0, i, v)", "torch.full_like(x, v)",
    "x.new_full((2,), v)", "torch.full\n(s, v)", "x.fill_(v)", "xmasked_fill(m, v)", "refill(x)", "_fill(x)",
    "prefill_(x)", "x.full_likes(v)", "fully(x)", "full", "masked_fill", "a = 1  # full(", "fullfill(x)",
    "x.masked_fillfill_(v)", "index_full(x)", "new_fill_(x)",
])
def test_the_quick_fill_test_answers_as_the_fill_pattern(text):
    expected = imported_constants._FILLS.search(text) is not None
    assert imported_constants._calls_a_fill(text) == expected
    assert imported_constants._calls_a_fill("import torch\n" + text + "\n") == expected


def test_every_fill_name_ends_as_the_quick_test_asks():
    for name in imported_constants.FILL_NAMES:
        end = imported_constants._FILL_ENDS.search(f"x.{name} (y, 0)")
        assert end is not None and end.start() >= len("x.") and end.start() - len("x.") <= 7


def test_the_fill_of_the_imported_constant_is_reported():
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import lint_project
    from project_files import project_findings

    found = [f for f in project_findings(lint_project(_files(2), Settings.default())) if f[2] == "AMP110"]
    assert found == [("onmt/modules/attn0.py", 18, "AMP110")]


@pytest.mark.parametrize("text, name", [("aaa", "aa"), ("aaaa", "aa"), ("x = INF\nINF", "INF"), ("INF", "INF"),
                                        ("", "INF"), ("INFINF", "INF"), ("IN F INF", "INF")])
def test_twice_counts_as_str_count(text, name):
    assert imported_constants._twice(text, name) == (text.count(name) >= 2)


@pytest.mark.parametrize("text, bound", [("INF = 1e9\n", True), ("x = 1\nINF: float = -1e9\n", True),
                                         ("x = 1\n  INF = 1e9\n", False), ("xINF = 1e9\n", False),
                                         ("x = 1\r\nINF = (1e9)\n", True), ("x = 1\rINF = 1e9\n", False),
                                         ("INF = float('inf')", True), ("INF = BIG\n", False)])
def test_a_name_starting_a_line_is_searched(text, bound):
    assert imported_constants._binds_a_number(text, "INF", {}) is bound


@pytest.mark.parametrize("text", [
    "dtype: torch.dtype = torch.float16", "x = torch.half", "torch.bfloat16", "xtorch.float16", "_torch.half",
    "torch.float16x", "torch.halfway", "torch.float32", "my.torch.bfloat16 ", "torch.float1", "torch.float16_t",
    "xtorch.float16 and torch.half", "torch.floattorch.half",
])
def test_the_quick_half_literal_test_answers_as_the_pattern(text):
    from amplint.analysis.project import dtype_fields, text_tests

    expected = text_tests._HALF_LITERAL.search(text) is not None
    assert dtype_fields.names_a_half_dtype(text) == expected
    assert dtype_fields.names_a_half_dtype("@dataclass\n" + text + "\n") == expected
