"""A file over the size bound is analysed in parts of top-level statements (amplint.analysis.large_files,
issue 34): same findings as one whole analysis where no fact crosses a part, every line owned by
one part, a warning naming the file, no fix applied. The bound is lowered here so that a small
file is split the way a 1 MB one is."""

from __future__ import annotations

import ast

import pytest

from amplint.analysis import large_files
from amplint.analysis.engine import Settings, lint_source

HEADER = '''"""Training steps (a long generated file)."""
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast

NEG_INF = -1e9
BIG = 65504.0 * 2
'''

BLOCK = '''

class Block{i}(nn.Module):
    def forward(self, q, k, mask):
        with torch.autocast("cuda", dtype=torch.float16):
            scores = (q @ k.transpose(-2, -1)).masked_fill(mask, -1e9)
        weights = scores.float()
        weights[mask] = NEG_INF
        return weights


def train_step_{i}(model, optimizer, x):
    scaler = GradScaler()
    with autocast():
        loss = model(x)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss


def prepare_{i}(x):
    h = x.half()
    buf = torch.zeros(8, dtype=torch.float16)
    buf[0] = BIG  # a constant bound in the first part
    return h, buf
'''

TABLE = '''

OPS = [
{rows}
]
'''


def _source(blocks: int, rows: int = 0) -> str:
    text = HEADER + "".join(BLOCK.format(i=i) for i in range(blocks))
    if rows:
        body = "\n".join(f'    ("op_{i}", torch.float16, {i}),  # row {i}' for i in range(rows))
        text += TABLE.format(rows=body) + BLOCK.format(i=blocks)
    return text


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(large_files, "PARTS_ABOVE", 6000)
    monkeypatch.setattr(large_files, "PART_SIZE", 2500)


def _found(result):
    return [(d.code, d.line, d.column, d.end_line, d.end_column, d.message)
            for d in result.diagnostics]


def test_a_file_under_the_bound_is_analysed_whole():
    source = _source(3)
    assert len(source) < large_files.PARTS_ABOVE
    assert large_files.split(source) is None
    assert lint_source("small.py", source, Settings.default()).warnings == []


def test_every_line_is_owned_by_one_part_and_each_part_parses(small_bound):
    source = _source(12, rows=300)
    parts = large_files.split(source)
    assert parts is not None and len(parts) > 3
    owners = {}
    for index, part in enumerate(parts):
        ast.parse(part.text)
        for lo, hi in part.owned:
            for line in range(lo, hi + 1):
                assert line not in owners, f"line {line} owned twice"
                owners[line] = index
        # each part's text is the file's lines it names, in order
        file_lines = source.splitlines(keepends=True)
        assert part.text == "".join(file_lines[n - 1] for n in part.lines)
    assert sorted(owners) == list(range(1, source.count("\n") + 1))
    # the 300-row table (one statement) is shared out between parts, brackets in each
    table_parts = [p for p in parts if any("OPS = [" in line for line in p.text.splitlines())]
    assert len(table_parts) >= 2


def test_findings_in_parts_equal_the_whole_analysis(small_bound, monkeypatch):
    source = _source(12, rows=300)
    parted = lint_source("train.py", source, Settings.default())
    assert len(parted.warnings) == 1 and parted.warnings[0].startswith("train.py: over")
    monkeypatch.setattr(large_files, "PARTS_ABOVE", 10 ** 9)
    whole = lint_source("train.py", source, Settings.default())
    assert whole.warnings == []
    assert _found(parted) == _found(whole)
    # the findings reach the last part, through names imported in the first
    codes = {d.code for d in whole.diagnostics}
    assert "AMP130" in codes
    assert max(d.line for d in parted.diagnostics) > source.count("\n") - 30
    assert not parted.errors


def test_a_file_in_parts_is_reported_not_fixed(small_bound):
    source = _source(12)
    result = lint_source("train.py", source, Settings.default(), fix=True)
    assert result.fixed_source is None and not result.fixes_applied
    assert result.diagnostics and result.found_before == len(result.diagnostics)
    assert "fixes are not applied" in result.warnings[0]


def test_a_parse_error_of_a_part_names_the_files_line():
    part = large_files.Part("x\n" * 5, [10, 11, 12, 13, 14], [(10, 14)])
    mapped = large_files._map_error("f.py:3:4: cannot parse with LibCST: bad", "f.py", part)
    assert mapped == "f.py:12:4: cannot parse with LibCST: bad"


def test_the_project_pass_does_not_parse_a_file_in_parts(small_bound, tmp_path, monkeypatch):
    """Asked on demand for the summary of a file over the bound (another file calls into it),
    the project pass gets None, as from the file's own lint, instead of parsing it whole
    (torch's common_methods_invocations.py linted in place: 838 MB for that one tree)."""
    from amplint.run import project_inputs

    big, small = tmp_path / "big.py", tmp_path / "small.py"
    big.write_text(_source(12), encoding="utf-8")
    small.write_text(_source(1), encoding="utf-8")
    parsed = []
    real_parse = project_inputs.parse
    monkeypatch.setattr(project_inputs, "parse", lambda text: parsed.append(text) or real_parse(text))
    assert project_inputs.summarize_file(str(big)) is None
    assert parsed == []
    assert project_inputs.summarize_file(str(small)) is not None
    assert len(parsed) == 1


def test_each_parts_tree_is_freed_without_the_cyclic_collector(small_bound, monkeypatch):
    """A part's facts release their cycles once its lint is done, so its tree goes by reference
    counting and the collector's pass after each part does not go over it (issue 34: that pass
    was ~1.3 s CPU of the 50,000-line file). Counted, not timed: the objects the collector finds
    unreachable after the parts, against the nodes of the parts' trees (before: all of them)."""
    import gc

    from amplint.analysis.parsing import parse

    def count(node) -> int:
        return 1 + sum(count(child) for child in node.children)

    source = _source(12)
    parts = large_files.split(source)
    nodes = sum(count(parse(part.text)) for part in parts)  # whitespace nodes too
    unreachable = []
    real_collect = gc.collect
    monkeypatch.setattr(large_files.gc, "collect", lambda: unreachable.append(real_collect()))
    real_collect()
    enabled = gc.isenabled()
    gc.disable()  # as amplint runs a file (amplint.run.parallel.cycles_collected_after)
    try:
        result = lint_source("train.py", source, Settings.default())
    finally:
        if enabled:
            gc.enable()
    assert result.diagnostics and len(unreachable) == len(parts) > 3
    # before: 10,187 for 5,945 nodes; now 1,188 (a rule's local class, `ast.literal_eval`'s
    # closures: a few hundred objects a part)
    assert sum(unreachable) < nodes // 3, (sum(unreachable), nodes)


def test_each_part_is_placed_by_the_files_one_ast_parse(small_bound, monkeypatch):
    """The positions of a part's findings are placed by the outline of its statements taken from
    the file's own `ast` parse (the split's), not by parsing each part again (issue 34: ~1 s of
    the 50,000-line file); a part holding a piece of a split literal has none (parsed as before)."""
    from amplint.analysis.positions import outline

    source = _source(12, rows=300)
    parts = large_files.split(source)
    assert [part.outline is None for part in parts] == ['("op_' in part.text for part in parts]
    assert sum(part.outline is not None for part in parts) > 3
    for part in parts:
        if part.outline is not None:
            assert part.outline == outline(ast.parse(part.text).body)
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: parsed.append(text) or real_parse(text, *a, **k))
    result = lint_source("train.py", source, Settings.default())
    assert result.diagnostics and len(result.warnings) == 1
    assert not any(part.text in parsed for part in parts if part.outline is not None)
