"""A file's registrations (`flow.registrations` of its summary: `@HEADS.register_module()`,
`MODELS.register_module(module=Net)`, `X.register(name)(Net)`) without summarising it: the
class flow's registry search (flowindex.FlowIndex._registrations) reads every file whose text
registers a class, and on mmdetection that is most of the package (243 of 1,070 files), while
only the files whose classes something builds are read further.

The same walk as ast_flow.AstFlowCollector's (the class decorators, then the module-level calls
in the tree's order), over the same tree and names, so the list equals the summary's, value for
value and in order. Where it could differ it answers None and the caller summarises the file:
a text with `\r` or form feeds (line starts `ast` and this module's text tests count
otherwise), a text the first pass parses with LibCST (`needs_summary`), a registry written as
anything but a name or a dotted name, any error (a statement `ast_tree` refuses included).
(The `amp=` text the `ast` summary also refuses is about a detectron2 setting, not about
registrations: those files' LibCST summaries list the same registrations.)"""

from __future__ import annotations

import ast
import warnings
from typing import List, Optional, Tuple

from amplint.analysis.parsing import own_tree
from amplint.analysis.project.ast_flow import AstFlowCollector
from amplint.analysis.project.ast_summary import _AstSummarizer
from amplint.analysis.project.ast_tree import call_args, dotted

Registration = Tuple[tuple, str]  # (the registry's value, the class's name)


def ast_registrations(path: str, text: str) -> Optional[List[Registration]]:
    """What the file's summary would list in `flow.registrations`; None: not known here."""
    from amplint.analysis.project import needs_summary  # the package's own test, not a cycle at import

    if "\r" in text or "\x0c" in text or needs_summary(text):
        return None  # line endings `ast` counts otherwise (ast_tree.REFUSED_TEXT), first-pass texts
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = own_tree(text)  # (its function bodies are dropped below)
        if not _indented_class(text):
            _drop_function_bodies(module.body)
        flow = AstFlowCollector(_AstSummarizer(path, text, module))
        try:
            return _registrations(flow)
        finally:
            flow.tree.release()  # the registrations hold none of the walk's records
    except Exception:  # noqa: BLE001  (a refusal or an analysis bug: the summary decides)
        return None


def _registrations(flow) -> Optional[List[Registration]]:
    """The registrations of the walked file (module-level class decorators, then module-level
    calls, in the tree's order); None where a registry is not a plain (dotted) name."""
    tree = flow.tree
    for name, frame in tree.classes.items():
        if frame.parent is tree.module_frame:
            for dec in frame.node.decorator_list:
                if not _plain_registry(dec.func if type(dec) is ast.Call else dec):
                    return None
    flow._registrations()
    for site in tree.calls:
        node = site.node
        if type(node.func) in (ast.Call, ast.Attribute) and flow.key_of(site.frame) == "":
            func = node.func.func if type(node.func) is ast.Call else node.func
            if not _plain_registry(func):
                return None
            flow._call_registration(node, call_args(node), site.frame)
    return list(flow.facts.registrations)


def _indented_class(text: str) -> bool:
    """Does a `class` statement start after indentation (inside a function, a class, a block)?
    Told from the text: a class statement always starts its line."""
    start = text.find("class")
    while start != -1:
        line = text.rfind("\n", 0, start) + 1
        if line != start and text[line:start].isspace() and text[start + 5:start + 6].isspace():
            return True
        start = text.find("class", start + 5)
    return False


def _drop_function_bodies(body) -> None:
    """Empty every function's body (methods' too): what the walk gathers for registrations
    (the module's imports and bindings, its classes, the calls at module level and in class
    bodies) lies outside them, except a class defined inside a function (`tree.classes` keeps
    the first class of a name), which `_indented_class` rules out first. Decorators,
    defaults and annotations stay (they run at the def)."""
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            stmt.body = [ast.Pass()]
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if type(inner) is list:
                _drop_function_bodies(inner)
        for handler in getattr(stmt, "handlers", ()):
            _drop_function_bodies(handler.body)


def _plain_registry(expr) -> bool:
    """False for `<registry>.register_module` / `.register` whose registry is not a (dotted)
    name: its value could depend on what the walk before the registrations gathered."""
    if type(expr) is not ast.Attribute or expr.attr not in ("register_module", "register"):
        return True  # not a registration
    return dotted(expr.value) is not None
