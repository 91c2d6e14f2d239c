"""The trees a process keeps for later readers of the same text: Python's own `ast` trees (shared
by readers one after another, and held through the project pass) and LibCST trees held between a
run's phases. Apart from parsing.py so that a run that parses nothing (a warm run) imports no
LibCST to set them up."""

from __future__ import annotations

import ast
import collections
import contextlib
import os
import threading
import warnings
from typing import TYPE_CHECKING, Dict, Iterable, Optional

if TYPE_CHECKING:
    import libcst as cst


# Python's own tree of a text, shared by the readers that parse the same file one after another
# (issue 34): the lint's prefilter and the summary's statement starts, the protocol reader and the
# `ast` summary, the region seeds of the project pass. Lightning's full `-j 1` run made 153 `ast`
# parses of its 98 texts (132 with this). The readers only read the tree: one that changes it
# (ast_registrations) parses its own. The last few trees are kept, bounded by their texts' size:
# kept longer, trees cost the collector's passes more than their parses save (fairseq, 16
# trees: 119 parses on Lightning, but CPU up ~0.3 s on fairseq; 4 trees: down).
_TREES: "collections.OrderedDict[str, ast.Module]" = collections.OrderedDict()
_TREES_LOCK = threading.Lock()
_MAX_TREES = 4
_MAX_TREE_CHARS = 1 << 20  # the texts of the trees kept, together (a tree: ~10-20x its text)
_kept_chars = 0


def python_tree(source: str) -> ast.Module:
    """`ast.parse(source)` (warnings silenced), the same tree as the last readers' when they
    parsed the same text; raises as `ast.parse` does. The tree must not be changed."""
    global _kept_chars
    with _TREES_LOCK:
        tree = _TREES.get(source)
        if tree is not None:
            _TREES.move_to_end(source)
            return tree
    with _TREES_LOCK:
        tree = _HELD.pop(source, None)
        if tree is not None:
            _drop_held(source)
    if tree is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
        _accepted(source)
        if _holding == os.getpid():
            _hold(source, tree)
    if len(source) <= _MAX_TREE_CHARS // 4:
        with _TREES_LOCK:
            if source not in _TREES:
                _TREES[source] = tree
                _kept_chars += len(source)
            while len(_TREES) > _MAX_TREES or _kept_chars > _MAX_TREE_CHARS:
                _kept_chars -= len(_TREES.popitem(last=False)[0])
    return tree


# The texts `ast.parse` (or `syntax_error`'s own check) accepted in this process (issue 34).
# `syntax_error` answers None for them without asking Python's parser again: a file the project pass summarised from `ast`, or
# a reader of the pass parsed, is checked by the lint after the pass, when its tree is long
# gone from the few kept above (d2: 41 of its 457 checks; fairseq 166 of 714). Kept as (length,
# hash) keys, not the texts: holding the texts themselves kept up to 32M characters alive
# (transformers: +80 MB at the peak); a string caches its hash, and two texts of one length
# with one 64-bit hash are not a risk worth that memory.
_ACCEPTED: set = set()
_MAX_ACCEPTED = 1 << 20


def _accepted(source: str) -> None:
    with _TREES_LOCK:
        if len(_ACCEPTED) >= _MAX_ACCEPTED:
            _ACCEPTED.clear()
        _ACCEPTED.add((len(source), hash(source)))


def own_tree(source: str) -> ast.Module:
    """`ast.parse(source)` for a reader that changes its tree (not shared), raising as it does;
    its text then counts as accepted (mmdet: 92 registration reads, checked again after)."""
    tree = ast.parse(source)
    _accepted(source)
    return tree


def parsed_before(source: str) -> bool:
    """Did python_tree's `ast.parse` or `syntax_error` accept this text in this process?"""
    with _TREES_LOCK:
        return (len(source), hash(source)) in _ACCEPTED


# The trees the project pass makes, held past the few kept above for the lint of the same
# file after the pass (issue 34): a file the pass summarised on demand from `ast` and then gave
# entries is read by the lint's prefilter (prefilter_entries), which parsed it again (d2: 18
# of its 55). Held only while the pass runs, in its process (`holding_trees`; a worker the
# pool forks meanwhile keeps nothing), the newest within a bound on their texts' size; when
# the pass ends only the trees of the files it names (`keep_held`) stay, each until its first
# reader takes it, and the run drops the rest (`drop_held`).
_HELD: Dict[str, ast.Module] = {}
_HELD_PATHS: Dict[str, str] = {}  # path -> its text, for the trees a summary tagged
_MAX_HELD_CHARS = 1 << 18  # ~7 MB of trees (fairseq: 1 << 21 held ~65 MB more at the peak)
_held_chars = 0
_holding = 0  # the id of the process holding them


@contextlib.contextmanager
def holding_trees():
    global _holding
    _holding = os.getpid()
    try:
        yield
    finally:
        _holding = 0


def in_holding_trees() -> bool:
    """Is this process within `holding_trees` (the project pass's)?"""
    return _holding == os.getpid()


def _hold(source: str, tree: ast.Module) -> None:
    global _held_chars
    with _TREES_LOCK:
        if source in _HELD or len(source) > _MAX_HELD_CHARS:
            return
        _HELD[source] = tree
        _held_chars += len(source)
        while _held_chars > _MAX_HELD_CHARS:  # the oldest go first
            oldest = next(iter(_HELD))
            del _HELD[oldest]
            _drop_held(oldest)


def _drop_held(source: str) -> None:
    global _held_chars
    _held_chars -= len(source)
    for path in [path for path, text in _HELD_PATHS.items() if text is source or text == source]:
        del _HELD_PATHS[path]


def tag_held(path: str, source: str) -> None:
    """`path`'s text is `source`: a held tree of it may be kept past the pass (`keep_held`)."""
    with _TREES_LOCK:
        if source in _HELD:
            _HELD_PATHS[path] = source


def keep_held(paths: Iterable[str]) -> None:
    """The pass is over: keep only the held trees of these files (their tags), drop the rest."""
    global _held_chars
    wanted = set(paths)
    with _TREES_LOCK:
        kept = {path: text for path, text in _HELD_PATHS.items() if path in wanted}
        trees = {text: _HELD[text] for text in kept.values()}
        _HELD.clear()
        _HELD.update(trees)
        _HELD_PATHS.clear()
        _HELD_PATHS.update(kept)
        _held_chars = sum(len(text) for text in trees)


def drop_held() -> None:
    keep_held(())


# LibCST trees held between the run's phases (issue 34), in the process that runs the project
# pass (a worker forked meanwhile neither holds nor takes). A region file that the first pass
# lints with its summary in this process is parsed again by the pass's entry readers
# (function_entries.parsed_facts: mmdet 13 of its 14 pass parses), and a file the pass parsed
# is parsed again by its lint with entries after the pass. The first pass holds the tree of a
# file with a region of its own or that may define an opener (`hold_module`, amplint.run.
# per_file); the pass holds every tree it makes; when the pass ends only the trees of the
# files linted after it stay (`keep_modules`), each until its lint takes it; the run drops the
# rest. Bounded by their texts' size (a tree: ~20 bytes a character), the oldest first out.
_MODULES: Dict[str, cst.Module] = {}
_MAX_MODULE_CHARS = 1 << 20
_module_chars = 0
_modules_owner = 0  # the id of the process holding them
_modules_kept = False  # the pass is over: a tree is handed out once


@contextlib.contextmanager
def holding_modules():
    """Within: this process holds LibCST trees for its later readers of the same text; all
    are dropped at the end."""
    global _modules_owner, _modules_kept
    _modules_owner, _modules_kept = os.getpid(), False
    try:
        yield
    finally:
        _modules_owner = 0
        keep_modules(())


def hold_module(source: str, module: cst.Module) -> None:
    """Hold `module`, the tree of `source`, for a later reader of the same text (only within
    `holding_modules`, in its process)."""
    global _module_chars
    if _modules_owner != os.getpid() or len(source) > _MAX_MODULE_CHARS:
        return
    with _TREES_LOCK:
        if source in _MODULES:
            return
        _MODULES[source] = module
        _module_chars += len(source)
        while _module_chars > _MAX_MODULE_CHARS:  # the oldest go first
            _module_chars -= len(next(iter(_MODULES)))
            del _MODULES[next(iter(_MODULES))]


def _held_module(source: str) -> Optional[cst.Module]:
    global _module_chars
    if not _MODULES or _modules_owner != os.getpid():
        return None
    with _TREES_LOCK:
        if not _modules_kept:
            return _MODULES.get(source)
        module = _MODULES.pop(source, None)
        if module is not None:
            _module_chars -= len(source)
        return module


def keep_modules(texts: Iterable[str]) -> None:
    """The pass is over: keep only the held trees of these texts, each for its first reader."""
    global _module_chars, _modules_kept
    texts = list(texts)
    with _TREES_LOCK:
        # a text is looked up only where a held text has its length: a set of all the texts
        # hashed every character of the tree (70M on the mixed monorepo) for a few held trees
        lengths = {len(text) for text in _MODULES}
        wanted = {text for text in texts if len(text) in lengths and text in _MODULES}
        kept = {text: module for text, module in _MODULES.items() if text in wanted}
        _MODULES.clear()
        _MODULES.update(kept)
        _module_chars = sum(len(text) for text in kept)
        _modules_kept = True
