"""Regions opened through a context-manager METHOD of another file, on an instance the class
flow follows (Lightning's precision plugins, trainers holding an AMP helper):

    # pkg/precision.py
    class MixedPrecision:
        def autocast_context_manager(self):
            return torch.autocast(self.device, dtype=torch.float16)

        @contextlib.contextmanager
        def forward_context(self):
            with self.autocast_context_manager():
                yield

    # pkg/strategy.py
    class Strategy:
        def __init__(self):
            self.precision_plugin = MixedPrecision()

        def training_step(self, model, batch):
            with self.precision_plugin.forward_context():
                loss = model(batch)

The method's own file reads whether, and how, it opens a region (facts/context_functions.py:
a `@contextmanager` method yielding under one, a method returning one). This pass:
1. the first-pass files whose `ast` shows a module-level class with a method whose own text
   says `autocast` (or another region word) and either yields inside a `with` (decorated
   `...contextmanager`) or has a `return` whose text names a region word: only those are
   parsed with LibCST and read;
2. the files whose text has `with <receiver>.<method>(`; in them the `with` items calling such a
   method name on a receiver other than `self` itself (`self.plugin.m()`, `plugin.m()`);
3. what the receiver holds, from the class flow (`call_targets`): the region is enabled only
   when every value it holds is an instance whose method opens an enabled region; maybe when
   some value is something else (an external object, a class whose method opens nothing);
   nothing when none opens one. Device and dtype when the methods agree.
The calling file gets an EntryContextRegion (its own rules see the region at that `with`) and
seeds for the calls under it, as context_openers.py does for a function."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Tuple

from amplint.analysis.facts.property_dtypes import PLAIN_BASES
from amplint.analysis.facts.region_entries import EntryContextRegion
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.context_openers import own_seeds
from amplint.analysis.project.opener_names import called_dtype, dotted_text, note_dtype_param, passes_false
from amplint.analysis.project.context_params import seeds_under
from amplint.analysis.project.scan_view import files_holding

# (file, "Class.method") -> ((enabled, device, dtype), what to cite, its `enabled` parameter)
_MAX_DEPTH = 8
Methods = Dict[Tuple[str, str], Tuple[tuple, str, Optional[Tuple[int, str]]]]


def _files_calling_method(project, name: str) -> FrozenSet[str]:
    """The files whose text holds `.name(`: among those the class flow's call index says call
    `name` where it is built (`.` is no word character, so each such text calls `name`): a
    lookup, not a scan of every text (the mixed monorepo tree's two method names were two
    whole-tree scans); else one scan."""
    word = f".{name}("
    indexed = project.flow.indexed_calls(name)
    if indexed is None:
        return files_holding(project, word)
    files = project.files
    return frozenset(path for path in indexed if word in files[path])


def method_region_seeds(project) -> list:
    methods = _methods(project)
    if not methods:
        return []
    names = {key.rsplit(".", 1)[1] for _, key in methods}
    seeds: list = []
    called = set().union(*(_files_calling_method(project, name) for name in names))
    for caller in project.python:
        if caller not in called:
            continue
        text = project.files.get(caller) or ""
        if "with" not in text:
            continue
        calls = _with_method_calls(text, names)
        summary = project.summary(caller) if calls else None
        if summary is None or summary.flow is None:
            continue
        for key, written, line, span, node in calls:
            function = summary.flow.functions.get(key)
            attr = written.rsplit(".", 1)[1]
            if written == f"self.{attr}":  # an inherited method: the same opener as a local one
                found = _inherited_region(project, methods, caller, key, attr)
            else:
                receivers = [r for r, a, _t, at in (function.dynamic if function is not None else ())
                             if a == attr and at == line]
                found = _region(project, methods, caller, key, receivers[0], attr) if len(receivers) == 1 else None
            if found is None:
                continue
            info, cite, param, paths = found
            info = called_dtype(project, info, cite, node, written)
            desc = f"{written}() at {project.display(caller)}:{line} ({cite})"
            deciding = frozenset({caller, *paths})
            if info[0] is not Enabled.FALSE and not passes_false(node, written, param):
                seeds.extend(seeds_under(project, caller, key, span, info, desc, deciding))
                seeds.extend(own_seeds(project, caller, key, node, info, desc, deciding))
            project.__dict__.setdefault("opener_regions", {}).setdefault(caller, set()).add(
                EntryContextRegion(key, written, *info, cite, param))
            project.__dict__.setdefault("opener_deps", {}).setdefault(caller, set()).update(paths)
    return seeds


def _region(project, methods: Methods, caller: str, key: str, receiver, attr: str):
    """((enabled, device, dtype), cite, enabled parameter, files) for `with receiver.attr():`,
    or None when no value the receiver holds opens a region."""
    held = [thing for thing in dict(project.flow.values(caller, key, receiver)) if thing[0] != "torch_inst"]
    targets = project.flow.call_targets(caller, key, receiver, attr)
    opened = [methods.get(target) for target, *_ in targets]
    active = [o for o in opened if o is not None]
    if not active:
        return None
    every = len(active) == len(opened) == len(held)
    states = {o[0][0] for o in active}
    if states == {Enabled.FALSE}:
        if not every:
            return None  # disabled on some values, nothing known on others: no claim
        enabled = Enabled.FALSE
    elif every and states == {Enabled.TRUE}:
        enabled = Enabled.TRUE
    else:
        enabled = Enabled.MAYBE
    devices = {o[0][1] for o in active}
    dtypes = {o[0][2] for o in active}
    params = {o[2] for o in active}
    cite = active[0][1] + ("" if len(active) == 1 else f" (and {len(active) - 1} more)")
    if enabled is Enabled.MAYBE and "on some paths" not in cite:
        cite += " on some paths"
    if any(o[1] in project.__dict__.get("_dtype_param_openers", ()) for o in active):
        project.__dict__["_dtype_param_openers"].add(cite)  # one of them takes its dtype from a parameter
    info = (enabled, devices.pop() if len(devices) == 1 else None, dtypes.pop() if len(dtypes) == 1 else None)
    paths = {target[0] for target, *_ in targets}
    return info, cite, (params.pop() if len(params) == 1 else None), paths


def _inherited_region(project, methods: Methods, caller: str, key: str, attr: str):
    """`with self.attr():` in method `key` ("C.f") of `caller`, where `attr` is not C's own: the
    method C's bases give (walked through the project: a base outside it other than
    `nn.Module`/`object` may define it first, then no answer), in another file, and the same
    method for every project subclass of C that runs `f` (one that overrides `attr` itself
    gives no answer). As `_region` answers it."""
    parts = key.split(".")
    if len(parts) != 2:
        return None
    cls, method = parts
    deciding = {caller}
    hit = _defining(project, caller, cls, attr, deciding, 0)
    if hit is None or hit[0] == caller or hit not in methods:
        return None
    for sub_path, sub in project.dispatch.subclasses(caller, cls):
        if project.method(sub_path, sub, method) != (caller, key):
            continue  # it overrides the calling method: it does not run this `with`
        if _defining(project, sub_path, sub, attr, deciding, 0) != hit:
            return None
    info, cite, param = methods[hit]
    return info, cite, param, deciding | {hit[0]}


def _defining(project, path: str, cls: str, attr: str, deciding: set, depth: int):
    """(file, "Class.attr") of the method `attr` class `cls` of `path` runs, or None where its
    bases cannot all be read (or it has none)."""
    summary = project.summary(path)
    info = summary.classes.get(cls) if summary is not None else None
    if info is None or depth > _MAX_DEPTH:
        return None
    deciding.add(path)
    if attr in info.methods:
        return path, f"{cls}.{attr}"
    for base in info.bases:
        if base in PLAIN_BASES:
            continue
        found = project.resolve_ref(path, base)
        if found is None or len(found[1]) != 1:
            return None  # outside the project: it may define the method
        hit = _defining(project, found[0], found[1][0], attr, deciding, depth + 1)
        if hit is not None:
            return hit
        if project.method(found[0], found[1][0], attr) is not None or project.external_bases(found[0], found[1][0], set()):
            return None  # the walk below stopped on a base it could not read
    return None


def _methods(project) -> Methods:
    from amplint.analysis.facts.context_functions import _opened_by, is_contextmanager
    from amplint.analysis.project.function_entries import parsed_facts
    from amplint.analysis.project.lines import call_anchors, node_lines

    found: Methods = {}
    for path in project.__dict__.get("_context_method_files", ()):  # context_openers._openers's test
        parsed = parsed_facts(project, path)
        if parsed is None:
            continue
        module, facts = parsed
        source = project.files.get(path)  # the text parsed_facts parsed
        anchors = call_anchors(facts.tree.calls)
        shown = project.display(path)
        for cls_name, cls in sorted(facts.tree.classes.items()):
            if cls.parent is not facts.tree.module_frame:
                continue
            for name, frame in sorted(cls.functions.items()):
                opened = _opened_by(facts.regions, frame)
                if opened is None:
                    continue
                enabled, inner, param = opened
                node = inner.with_node.items[0].item if inner.with_node is not None else inner.origin
                anchors[id(frame.node.name)] = frame.node
                lines = node_lines(module, [frame.node.name, node], source, anchors)
                maybe = {"enabled": "", "disabled": " (disabled)"}.get(enabled.value, " on some paths")
                how = "yields under the autocast region" if is_contextmanager(frame) else "returns the autocast"
                cite = (f"`{cls_name}.{name}()` of {shown}:{lines.get(id(frame.node.name), 0)} {how} "
                        f"at {shown}:{lines.get(id(node), 0)}{maybe}")
                found[(path, f"{cls_name}.{name}")] = ((enabled, inner.device, inner.dtype), cite, param)
                note_dtype_param(project, inner, cite)
    return found


def _with_method_calls(text: str, names) -> list:
    """(function key, the callee as written, line of the `with`, (first, last) line of its body,
    the `with` node) for each `with a.b.m(...):` item whose `m` is in `names` (`self.m()`: the
    file's own method, or an inherited one)."""
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list = []

    def visit(node, key: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{key}.{child.name}" if key else child.name)
                continue
            if isinstance(child, (ast.With, ast.AsyncWith)) and key:
                for item in child.items:
                    expr = item.context_expr
                    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
                            and expr.func.attr in names):
                        continue
                    written = dotted_text(expr.func)
                    if written is not None:
                        found.append((key, written, child.lineno, (child.body[0].lineno, child.end_lineno
                                                                   or child.lineno), child))
            visit(child, key)

    visit(tree, "")
    return found
