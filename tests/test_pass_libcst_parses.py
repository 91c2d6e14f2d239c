"""LibCST parses each file of a project run once where a later phase reads the same text
(issue 34). The first pass lints a region file with its summary; the project pass's entry
readers (module outputs, escapes, openers: function_entries.parsed_facts) parsed it again, and a
file the pass parsed was parsed again by its lint after the pass. The tree is held between the
phases in the process that runs the pass (amplint.analysis.parsing.holding_modules).

The project is tests/projects/escape_args_arcface (deepinsight/insightface's arcface_torch):
train_v2.py, a region file, calls the backbone module of backbones/ under autocast; the pass
reads train_v2.py's tree for that module output and follows it into partial_fc_v2.py (AMP105
there). The twin casts back to float32 in the region and stays silent."""

from __future__ import annotations

import collections
import os

import libcst
import pytest

from amplint.analysis import parsing, tree_cache
from project_files import cli_findings, load

NAME = "escape_args_arcface"
FINDINGS = [(f"{NAME}/partial_fc_v2.py", 17, "AMP105"), (f"{NAME}/partial_fc_v2.py", 24, "AMP105")]
EMBED = "            local_embeddings = backbone(img)\n"
CAST_BACK = ((EMBED, "            local_embeddings = backbone(img).float()\n"),)


def _counted_run(tmp_path, monkeypatch, edits=()):
    """The findings of a cold `-j 1` run, the files, and how often LibCST parsed each text."""
    files = load(NAME, edits)
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    parses = collections.Counter()
    real = libcst.parse_module

    def parse_module(source, *args, **kwargs):
        parses[source] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", parse_module)
    return cli_findings(tmp_path, "--no-cache", "--jobs", "1"), files, parses


@pytest.mark.parametrize("edits, findings", [((), FINDINGS), (CAST_BACK, [])])
def test_a_region_file_the_pass_reads_is_parsed_once(tmp_path, monkeypatch, edits, findings):
    """train_v2.py: linted with its summary before the pass, read by the pass's module outputs.
    Base: LibCST parsed it twice."""
    found, files, parses = _counted_run(tmp_path, monkeypatch, edits)
    assert found == findings
    assert parses[files[f"{NAME}/train_v2.py"]] == 1
    assert max(parses.values()) == 1


def test_held_trees_are_taken_by_the_same_text_and_dropped_after(monkeypatch):
    """Within `holding_modules`: a held tree is the tree of the next parse of its text; the
    pass's own parses are held too; after `keep_modules(texts)` only those texts' trees stay,
    each for one reader; nothing is held after `holding_modules` or in another process."""
    monkeypatch.setattr(tree_cache, "_MODULES", {})
    monkeypatch.setattr(tree_cache, "_module_chars", 0)
    first, passed, dropped = "x = 1\n", "y = 2\n", "z = 3\n"
    with parsing.holding_modules():
        held = parsing.parse(first)
        parsing.hold_module(first, held)
        assert parsing.parse(first) is held and parsing.parse(first) is held  # the pass reads it
        assert parsing.parse(dropped) is not parsing.parse(dropped)  # no pass running: not held
        with parsing.holding_trees():  # the pass
            made = parsing.parse(passed)
            assert parsing.parse(passed) is made
            parsing.parse(dropped)
        parsing.keep_modules([first, passed])
        assert set(tree_cache._MODULES) == {first, passed}
        assert parsing.parse(passed) is made
        assert parsing.parse(passed) is not made  # taken: parsed afresh
        owner = tree_cache._modules_owner
        monkeypatch.setattr(tree_cache, "_modules_owner", owner + 1)  # as a forked worker sees it
        assert parsing.parse(first) is not held
        monkeypatch.setattr(tree_cache, "_modules_owner", owner)
    assert tree_cache._MODULES == {} and tree_cache._module_chars == 0
    parsing.hold_module(first, held)  # outside: nothing is held
    assert tree_cache._MODULES == {}


def test_held_trees_are_bounded_by_their_texts(monkeypatch):
    monkeypatch.setattr(tree_cache, "_MODULES", {})
    monkeypatch.setattr(tree_cache, "_module_chars", 0)
    monkeypatch.setattr(tree_cache, "_MAX_MODULE_CHARS", 12)
    texts = ["a = 1\n", "b = 2\n", "c = 3\n"]
    with parsing.holding_modules():
        for text in texts:
            parsing.hold_module(text, parsing.parse(text))
        assert list(tree_cache._MODULES) == texts[1:] and tree_cache._module_chars == 12


class _HashCounted(str):
    hashed = 0

    def __hash__(self):
        _HashCounted.hashed += 1
        return str.__hash__(self)


def test_keeping_trees_hashes_only_the_texts_a_held_tree_could_be_of(monkeypatch):
    """The pass ends with `keep_modules(every text)` (the mixed monorepo tree: 5,338 texts, 70M
    characters, for the few trees the 1M-character bound holds): a text that no held tree has
    the length of is not hashed, and the trees kept are those of the texts given."""
    monkeypatch.setattr(tree_cache, "_MODULES", {})
    monkeypatch.setattr(tree_cache, "_module_chars", 0)
    first, second = "x = 1\n", "yy = 22\n"
    others = [_HashCounted("w%d = %d\n" % (i, i) * (3 + i)) for i in range(40)]
    same_length = _HashCounted("q = 9\n")  # first's length, another text
    given = _HashCounted(second)
    with parsing.holding_modules():
        for text in (first, second):
            parsing.hold_module(text, parsing.parse(text))
        _HashCounted.hashed = 0
        parsing.keep_modules(others + [same_length, given])
        assert set(tree_cache._MODULES) == {second}
        assert _HashCounted.hashed <= 4  # (same_length and given, each at most twice)
