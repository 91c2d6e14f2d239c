"""Per-module summaries for the project pass: plain data, computed from one parse of a file.

A summary says, for each function and method of the file (keyed "f", "C.m", "C.m.inner"):
which functions of other modules it calls (as the file names them: "losses.FocalLoss",
".losses.focal_loss" for relative imports), which functions of the same file it calls, and
whether a region of the file itself already decides its autocast state. It also records the
calls the file makes under its own active autocast regions (the roots of cross-file
propagation), its classes (bases, methods, decorators) and framework mixed-precision settings
(see frameworks.py). Line numbers are computed only for the nodes a message may cite.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.parsing import parse
from amplint.analysis.project.flowfacts import PROPERTIES, FlowCollector, frame_key
from amplint.analysis.project.frameworks import Setting, find_settings  # noqa: F401  (Setting re-exported)
from amplint.analysis.project.lines import call_anchors, node_lines
from amplint.analysis.project.relative_names import Names, relative_imports
from amplint.analysis.project.selfcalls import record_self_call
from amplint.analysis.project.summary_types import (  # noqa: F401  (re-exported: the summary's data types)
    ClassSummary, ExternalCall, FunctionSummary, ModuleSummary, Origin, RegionInfo, call_arguments,
    top_level_functions,
)
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, iter_nodes, receiver_root

# A file is summarised in the first pass only if its text can open a region or hold a
# framework setting; other files are summarised on demand, when a region reaches them.
CALLER_TEXT = re.compile(r"autocast|optim_context|auto_fp16")
# its words: one of them is in every text CALLER_TEXT matches
CALLER_WORDS = ("autocast", "optim_context", "auto_fp16")


# -- the summary ------------------------------------------------------------------------------

def own_region(site: CallSite) -> Optional[Region]:
    """The region this file puts around the call inside its function (a `with`, a decorator),
    not one inherited from callers."""
    frame: Optional[Frame] = site.frame
    while frame is not None and frame.kind == "with":
        if frame.region is not None:
            return frame.region  # type: ignore[return-value]
        frame = frame.parent
    if frame is not None and frame.kind == "function" and frame.region is not None:
        return frame.region  # type: ignore[return-value]
    return None


def _in_lambda(site: CallSite, inside: Optional[Dict[int, Set[int]]]) -> bool:
    """A call in a lambda's body runs where the lambda is called (flowfacts' `_lambdas` records
    it at that call), not where it is written. `inside`: statement -> the nodes of its lambdas'
    bodies, each statement walked once (a walk per call read a class statement's whole body
    for each of its calls: d2's first pass, 462 walks); None: the file has no lambda."""
    stmt = site.line_stmt if site.line_stmt is not None else site.top_stmt
    if stmt is None or inside is None:
        return False
    found = inside.get(id(stmt))
    if found is None:
        found = inside[id(stmt)] = {id(inner) for node in iter_nodes(stmt) if isinstance(node, cst.Lambda)
                                    for inner in iter_nodes(node.body)}
    return id(site.node) in found


_WHAT = {
    "with": "the autocast region",
    "decorator": "the autocast decorator",
    "framework": "the framework autocast region",
}


def _cite_node(region: Region) -> cst.CSTNode:
    """The node whose line is cited for a region (no leading comment lines)."""
    with_node = region.with_node
    if with_node is not None and region.kind == "with":
        return with_node.items[0].item
    origin = region.origin
    if isinstance(origin, cst.Decorator):
        return origin.decorator
    return origin


class _Summarizer:
    def __init__(self, path: str, module: cst.Module, facts: FileFacts, portable: bool = False,
                 source: Optional[str] = None) -> None:
        self.path = path
        self.source = source  # the text `module` was parsed from: lines without code generation
        self.portable = portable  # every line now, in one code generation; the tree is not kept
        self.module = module
        self.facts = facts
        self.tree = facts.tree
        self.names = Names(relative_imports(module))
        self.summary = ModuleSummary(path)
        self.cite_nodes: List[cst.CSTNode] = []
        self._roots: List[Tuple[ExternalCall, cst.CSTNode, Region]] = []
        self._finishers: List = []
        # instances of classes named by reference (imported or of this file: "@Name")
        self.instances: Dict[str, str] = {}
        self.self_instances: Dict[Tuple[str, str], str] = {}
        self._flow_regions: List[Region] = []
        self._flow_index: Dict[int, int] = {}
        self.self_roots: List[Tuple[str, str, cst.CSTNode, int, str]] = []
        self._own_regions: List[Region] = []

    def run(self) -> ModuleSummary:
        tree = self.tree
        summary = self.summary
        module_frame = tree.module_frame
        summary.imports = dict(module_frame.imports)
        summary.imports.update(self.names.relative)
        for name, frame in tree.classes.items():
            if frame.parent is not module_frame:
                continue
            node = frame.node
            assert isinstance(node, cst.ClassDef)
            summary.classes[name] = ClassSummary(
                name,
                tuple(self._class_ref(arg.value, module_frame) for arg in node.bases if arg.keyword is None),
                tuple(frame.functions),
                tuple(
                    ref for ref in (self._decorator_ref(dec, module_frame) for dec in node.decorators)
                    if ref
                ),
            )
        self._collect_instances()
        for frame in tree.frames:
            if frame.kind == "function":
                key = frame_key(frame)
                if key is not None:
                    summary.functions[key] = FunctionSummary(
                        key, decided=frame.region is not None or frame.inherited is not None
                    )
        graph = self.facts.callgraph
        region_calls = {id(site) for site in self.facts.regions.region_calls}
        flow = FlowCollector(self)
        flow.collect()
        # no lambda in the text, none in the tree: no statement is walked for one
        lambdas: Optional[Dict[int, Set[int]]] = {} if self.source is None or "lambda" in self.source else None
        for site in tree.calls:
            record_self_call(self, site)
            external = self._external(site)
            callees = [f for f in graph.callees(site, values=False) if not _is_property(f)]
            # `self.loss(out, y)` with `loss` a property runs the getter, then calls what it
            # returns: the flow answers that call, as it answers `self._loss(out, y)`
            dynamic = (external is None or external.kind != "call") and not callees
            root = None
            if id(site) in region_calls:
                region = self.facts.regions.region_of(site.frame)
                if dynamic and region is not None and region.active:
                    root = self.region_index(region.root)
            reached = None
            if dynamic and id(site) not in region_calls and not _in_lambda(site, lambdas):
                region = self.facts.regions.region_of(site.frame)
                # a same-file function a region of the file calls (its region is decided here);
                # a call in a lambda's body is the lambda's call site's (flowfacts' `_lambdas`)
                if region is not None and region.active and region.kind == "call":
                    reached = self.region_index(region.root)
            own = own_region(site) is not None and root is None
            flow.call(site, dynamic and not own and (root is not None or id(site) not in region_calls), root,
                      reached)
            if id(site) in region_calls:
                if external is not None:
                    region = self.facts.regions.region_of(site.frame)
                    if region is not None and region.active:
                        self._root(site, external, region)
                continue
            if external is not None and external.kind == "call":
                # an imported function called in a same-file function a region of the file
                # calls: the pass does not propagate from a function whose region the file
                # decides, so such a call is a root of that region (the class flow's calls there
                # are its helper roots)
                region = self.facts.regions.region_of(site.frame)
                if region is not None and region.active and region.kind == "call" \
                        and not _in_lambda(site, lambdas):
                    self._root(site, external, region)
            function = site.frame.function
            if function is None or own_region(site) is not None:
                continue
            owner = summary.functions.get(frame_key(function) or "")
            if owner is None:
                continue
            if external is not None:
                owner.calls.append((external, site.node))  # type: ignore[arg-type]
            for callee in graph.callees(site, values=False):
                key = frame_key(callee)
                if key is not None and key not in owner.local:
                    owner.local.append(key)
        find_settings(self)
        for frame in tree.frames:  # for --show-regions, which lists regions that reach nothing too
            region = frame.region
            if region is not None and region.active and region.kind in ("with", "decorator") and all(
                seen is not region for seen in self._own_regions
            ):
                self._own_regions.append(region)
                self.cite_nodes.append(_cite_node(region))
        self.after_lines(flow.finish)
        self._resolve_lines()
        summary.flow = flow.facts
        return summary

    def region_index(self, root: Region) -> int:  # its index in ModuleSummary.region_infos
        index = self._flow_index.setdefault(id(root), len(self._flow_index))
        if index == len(self._flow_regions):
            self._flow_regions.append(root)
            self.cite_nodes.append(_cite_node(root))
        return index

    # -- references -------------------------------------------------------------------------
    def _class_ref(self, expr: cst.BaseExpression, frame: Frame) -> str:
        name = dotted_name(expr)
        if name and len(name) == 1 and name[0] in self.tree.classes and name[0] not in frame.imports:
            return "@" + name[0]
        ref = self.names.resolve(name, frame)
        if ref is not None:
            return ref
        return "?" + ".".join(name or ())

    def _decorator_ref(self, dec: cst.Decorator, frame: Frame) -> Optional[str]:
        expr = dec.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        return self.names.resolve_expr(expr, frame)

    def class_of_value(self, value: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """`Net(...)`, `losses.FocalLoss(...).cuda()` -> "@Net", "losses.FocalLoss"."""
        root = receiver_root(value)
        if (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("from_pretrained", "from_config")
        ):
            root = cst.Call(func=value.func.value)  # `Net.from_pretrained(...)` makes a Net
        if not isinstance(root, cst.Call):
            return None
        name = dotted_name(root.func)
        if not name:
            return None
        if len(name) == 1 and name[0] in self.tree.classes:
            return "@" + name[0]
        return self.names.resolve(name, frame)

    def _collect_instances(self) -> None:
        self.facts.callgraph.record_instances(
            lambda site: self.class_of_value(site.value, site.frame),
            self.instances, self.self_instances,
        )

    def instance_ref(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        if isinstance(expr, cst.Name):
            if self.names.resolve((expr.value,), frame) is not None:
                return None
            return self.instances.get(expr.value)
        owner = self.facts.callgraph.self_attr_owner(expr, frame)
        if owner is not None:
            return self.self_instances.get(owner)
        return None

    def _external(self, site: CallSite) -> Optional[ExternalCall]:
        func = site.node.func
        frame = site.frame
        if isinstance(func, cst.Call):  # FocalLoss()(x)
            ref = self.class_of_value(func, frame)
            if ref is not None and not ref.startswith("@"):
                return ExternalCall(ref, "instance", "", 0)
            return None
        ref = self.names.resolve(site.dotted, frame)
        if ref is not None:
            if _is_library(ref):
                return None
            return ExternalCall(ref, "call", "", 0, args=call_arguments(site.node))
        instance = self.instance_ref(func, frame)
        if instance is not None and not instance.startswith("@"):
            return ExternalCall(instance, "instance", "", 0)
        if isinstance(func, cst.Attribute):
            instance = self.instance_ref(func.value, frame)
            if instance is not None and not instance.startswith("@"):
                return ExternalCall(instance, "method", func.attr.value, 0)
        return None

    # -- roots and lines --------------------------------------------------------------------
    def _root(self, site: CallSite, call: ExternalCall, region: Region) -> None:
        self._roots.append((call, site.node, region.root))
        self.cite_nodes.append(site.node)
        self.cite_nodes.append(_cite_node(region.root))

    def want_line(self, node: cst.CSTNode) -> None:
        self.cite_nodes.append(node)

    def after_lines(self, finish) -> None:
        """`finish(lines)` runs once line numbers are known (lines: id(node) -> line)."""
        self._finishers.append(finish)

    def _anchors(self, wanted) -> Optional[Dict[int, cst.CSTNode]]:
        """id(node) -> the statement that holds it, for node_lines: a call's simple statement
        line (else the compound statement it is in, which node_lines checks), a parameter's
        function."""
        if self.source is None:
            return None
        anchors = call_anchors(self.tree.calls)
        for site in self.tree.assigns:  # a value the value flow cites (flowvalues._mark)
            if site.line_stmt is not None:
                anchors.setdefault(id(site.value), site.line_stmt)
        for frame in self.tree.frames:  # a region's cited node: in its `with`'s or def's header
            region = frame.region
            if region is not None and frame.kind in ("with", "function"):
                node = _cite_node(region)
                holder = frame.node
                if id(node) not in anchors and (
                    (region.with_node is holder and region.kind == "with")
                    or any(dec.decorator is node for dec in getattr(holder, "decorators", ()))
                ):
                    anchors[id(node)] = holder
        if any(type(node) is cst.Param for node in wanted):
            for frame in self.tree.frames:
                node = frame.node
                if frame.kind == "function" and type(node) is cst.FunctionDef:
                    for param in _all_params(node.params):
                        anchors[id(param)] = node
        return anchors

    def _resolve_lines(self) -> None:
        summary = self.summary
        for function in summary.functions.values():
            calls = []
            for call, node in function.calls:  # type: ignore[misc]  # (call, node) until now
                calls.append(ExternalCall(call.ref, call.kind, call.attr, 0, len(summary._nodes), call.args))
                summary._nodes.append(node)
            function.calls = calls
            selfs = []
            for attr, node in function.self_calls:  # type: ignore[misc]  # (attr, node) until now
                selfs.append(ExternalCall("self", "self", attr, 0, len(summary._nodes)))
                summary._nodes.append(node)
            function.self_calls = selfs
        wanted = self.cite_nodes + summary._nodes if self.portable else self.cite_nodes
        lines = node_lines(self.module, wanted, self.source, self._anchors(wanted)) if wanted else {}
        if self.portable:
            summary._lines = [lines.get(id(node), 0) for node in summary._nodes]
            summary._nodes = []
        elif summary._nodes:
            summary._module = self.module
        for call, node, region in self._roots:
            origin = Origin(
                _WHAT.get(region.kind, "the autocast region"), self.path,
                lines.get(id(_cite_node(region)), 0),
            )
            self.summary.roots.append((
                ExternalCall(call.ref, call.kind, call.attr, lines.get(id(node), 0), args=call.args),
                RegionInfo(region.enabled, region.device, region.dtype, origin, region.root.cache_off),
            ))
        for key, attr, node, index, owner in self.self_roots:
            summary.self_roots.append((key, attr, lines.get(id(node), 0), index, owner))
        for region in self._flow_regions:
            origin = Origin(
                _WHAT.get(region.kind, "the autocast region"), self.path,
                lines.get(id(_cite_node(region)), 0),
            )
            self.summary.region_infos.append(RegionInfo(region.enabled, region.device, region.dtype, origin, region.root.cache_off))
        for region in self._own_regions:
            origin = Origin(
                _WHAT.get(region.kind, "the autocast region"), self.path,
                lines.get(id(_cite_node(region)), 0),
            )
            self.summary.regions.append(RegionInfo(region.enabled, region.device, region.dtype, origin, region.root.cache_off))
        for finish in self._finishers:
            finish(lines)


def _all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


_LIBRARIES = ("torch.", "numpy.", "math.", "typing.", "os.", "functools.", "collections.")


def _is_library(ref: str) -> bool:
    return ref.startswith(_LIBRARIES) or ref in ("torch", "print", "super")


def summarize(
    path: str, source: str, module: Optional[cst.Module] = None, facts: Optional[FileFacts] = None,
    portable: bool = False,
) -> Optional[ModuleSummary]:
    """The summary of one file, or None when it cannot be parsed (the lint pass reports that).
    `facts`: the file's own facts (no entries), when the caller has them already.
    `portable`: resolve every line now and drop the tree, so the summary can be pickled (sent
    from a worker process, or cached)."""
    try:
        if module is None:
            module = parse(source)
        summary = _Summarizer(path, module, facts or FileFacts(module), portable, source).run()
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return None
    if portable and summary is not None:
        summary.resolve_all_lines()
    return summary


def portable_summary(path: str, source: str, module: cst.Module, facts: FileFacts):
    """The summary a worker sends back (or the cache keeps): lines resolved, no tree."""
    return summarize(path, source, module, facts, portable=True)


def _is_property(frame: Frame) -> bool:
    """A `@property` / `@cached_property` getter: calling the attribute calls what it returns."""
    for dec in getattr(frame.node, "decorators", ()):
        name = dotted_name(dec.decorator)
        if name and name[-1] in PROPERTIES:
            return True
    return False
