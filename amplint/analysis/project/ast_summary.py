"""A module's portable summary from Python's `ast`, for files the project pass summarises on
demand (call sites, registrations, subclasses: `needs_summary(text)` is False, so the file
opens no region and holds no framework setting). It equals summary.portable_summary of the
same text, field for field, lines included; where it meets what it does not model exactly
(ast_tree.REFUSED_TEXT / REFUSED_NODES, or any doubt about a line) it returns a `Refusal` and
the caller summarises from LibCST. `ast.parse` is about ten times cheaper than LibCST's."""

from __future__ import annotations

import ast
import warnings
from typing import Dict, List, Optional, Tuple

from amplint.analysis.facts.callgraph import _shadowed
from amplint.analysis.facts.autocast_calls import AUTOCAST_APIS, DTYPES
from amplint.analysis.facts.tree import Frame
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.ast_aliases import absolute, keep_aliases
from amplint.analysis.project.ast_flow import AstFlowCollector
from amplint.analysis.project.flowfacts import PROPERTIES
from amplint.analysis.project.ast_frames import CallSite, function_key
from amplint.analysis.project.ast_lines import SourcePositions
from amplint.analysis.project.ast_names import ScopedNames
from amplint.analysis.project.ast_tree import (
    AstCollector, Refused, call_args, dotted, import_bindings, refusal,
)
from amplint.analysis.project.summary import _is_library
from amplint.analysis.project.summary_types import ClassSummary, ExternalCall, FunctionSummary, ModuleSummary


_PREPARE_METHODS = frozenset({"prepare", "prepare_model", "setup", "setup_module"})


class Refusal:
    """Not summarised from `ast`; `reason` says why (the benchmark counts them)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Refusal({self.reason!r})"


def ast_summary(path: str, text: str, refuse=None, check=None):
    """The file's portable summary, or a Refusal. `refuse(module)`: a further reason (or None)
    to refuse, asked of the parsed module; `check(summarizer)`: one asked after the walk."""
    why = refusal(text)
    if why is not None:
        return Refusal(why)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = python_tree(text)
        why = refuse(module) if refuse is not None else None
        if why is not None:
            return Refusal(why)
        summarizer = _AstSummarizer(path, text, module)
        try:
            summary = summarizer.run()
            why = check(summarizer) if check is not None else None
        finally:
            summarizer.tree.release()  # the summary holds none of the walk's records
        return Refusal(why) if why is not None else summary
    except Refused as refused:
        return Refusal(str(refused))
    except Exception as error:  # noqa: BLE001  (anything unexpected: the LibCST path decides)
        return Refusal(f"{type(error).__name__}")


def relative_imports(module: ast.Module) -> Dict[str, str]:
    """relative_names.relative_imports over `ast`."""
    found: Dict[str, str] = {}
    _relative_in(module.body, found)
    return found


def _relative_in(body, found: Dict[str, str]) -> None:
    # (a module-level function: a nested one that calls itself is a cycle left to the collector)
    for stmt in body:
        kind = type(stmt)
        if kind is ast.ImportFrom and stmt.level:
            for bound, target in import_bindings(stmt):
                found[bound] = target
        elif kind is ast.If:
            _relative_in(stmt.body, found)
            _relative_in(stmt.orelse, found)
        elif kind is ast.Try:
            _relative_in(stmt.body, found)
            for handler in stmt.handlers:
                _relative_in(handler.body, found)


def receiver_root(expr):
    while True:
        kind = type(expr)
        if kind is ast.Attribute or kind is ast.Subscript:
            expr = expr.value
        elif kind is ast.Call:
            if type(expr.func) is ast.Attribute:
                expr = expr.func.value
            else:
                return expr
        else:
            return expr


def self_attr_owner(target, frame: Frame) -> Optional[Tuple[str, str]]:
    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
        cls = frame.class_frame
        return (cls.name, target.attr) if cls is not None else None
    return None


class _AstSummarizer(SourcePositions):
    def __init__(self, path: str, text: str, module: ast.Module) -> None:
        self.path = path
        self.lines = text.split("\n")
        self.tree = AstCollector(module)
        keep_aliases(self.tree)
        self.sites = {id(site.node): site for site in self.tree.calls}
        self.names = ScopedNames(relative_imports(module))
        self.summary = ModuleSummary(path)
        self.instances: Dict[str, str] = {}
        self.self_instances: Dict[Tuple[str, str], str] = {}
        self.local_instances: Dict[str, str] = {}  # facts.callgraph: classes of this file only
        self.local_self_instances: Dict[Tuple[str, str], str] = {}

    def run(self) -> ModuleSummary:
        tree, summary = self.tree, self.summary
        module_frame = tree.module_frame
        summary.imports = dict(module_frame.imports)
        summary.imports.update(self.names.relative)
        for name, frame in tree.classes.items():
            if frame.parent is not module_frame:
                continue
            node = frame.node
            summary.classes[name] = ClassSummary(
                name,
                tuple(self._class_ref(base, module_frame) for base in node.bases),
                tuple(frame.functions),
                tuple(ref for ref in (self._decorator_ref(d, module_frame) for d in node.decorator_list) if ref),
            )
        for site in tree.assigns:
            if type(site.value) is not ast.Call and type(receiver_root(site.value)) is not ast.Call:
                continue  # no class for either reading below
            for cls, instances, selfs in (
                (self.class_of_value(site.value, site.frame), self.instances, self.self_instances),
                (self._local_class(site.value), self.local_instances, self.local_self_instances),
            ):
                if cls is None:
                    continue
                for target in site.targets:
                    if type(target) is ast.Name:
                        instances[target.id] = cls
                    owner = self_attr_owner(target, site.frame)
                    if owner is not None:
                        selfs[owner] = cls
        self.fp32 = {id(f) for f in tree.frames if f.kind == "function" and self._fp32_decorated(f)}
        for frame in tree.frames:
            if frame.kind == "function":
                key = function_key(frame)
                if key:
                    summary.functions[key] = FunctionSummary(key, decided=id(frame) in self.fp32)
        flow = AstFlowCollector(self)
        flow.collect()
        fp32 = self.fp32
        functions = summary.functions
        for site in tree.calls:
            own = bool(fp32) and self._in_fp32(site.frame)  # the file's own (inactive) region: LibCST's own_region
            if not own:
                self._self_call(site)
            external = self._external(site)
            callees = self.callees(site)
            called = [f for f in callees if not _is_property(f)]  # summary.py's twin: a getter's result is called
            flow.call(site, (external is None or external.kind != "call") and not called and not own)
            function = site.frame.function
            if function is None or own:
                continue
            owner = functions.get(function_key(function))
            if owner is None:
                continue
            if external is not None:
                owner.calls.append((external, site.node))  # type: ignore[arg-type]
            for callee in callees:
                key = function_key(callee)
                if key and key not in owner.local:
                    owner.local.append(key)
        flow.arms.settle(flow.facts.functions)
        lines: List[int] = []
        for function in summary.functions.values():
            calls = []
            for call, node in function.calls:  # type: ignore[misc]
                calls.append(ExternalCall(call.ref, call.kind, call.attr, 0, len(lines), call.args))
                lines.append(self.line(node))
            function.calls = calls
            selfs = []
            for attr, node in function.self_calls:  # type: ignore[misc]
                selfs.append(ExternalCall("self", "self", attr, 0, len(lines)))
                lines.append(self.line(node))
            function.self_calls = selfs
        summary._lines = lines
        summary.prepared = self._prepared()
        summary.flow = flow.facts
        return summary

    # -- references (summary._Summarizer) -------------------------------------------------
    def _class_ref(self, expr, frame: Frame) -> str:
        name = dotted(expr)
        if name and len(name) == 1 and name[0] in self.tree.classes and name[0] not in frame.imports:
            return "@" + name[0]
        ref = self.names.resolve(name, frame)
        if ref is not None:
            return ref
        return "?" + ".".join(name or ())

    def _decorator_ref(self, expr, frame: Frame) -> Optional[str]:
        if type(expr) is ast.Call:
            expr = expr.func
        return self.names.resolve(dotted(expr), frame)

    def class_of_value(self, value, frame: Frame) -> Optional[str]:
        if type(value) is ast.Call and type(value.func) is ast.Attribute and (
            value.func.attr in ("from_pretrained", "from_config")
        ):
            func = value.func.value
        else:
            root = receiver_root(value)
            if type(root) is not ast.Call:
                return None
            func = root.func
        name = dotted(func)
        if not name:
            return None
        if len(name) == 1 and name[0] in self.tree.classes:
            return "@" + name[0]
        return self.names.resolve(name, frame)

    def _local_class(self, value) -> Optional[str]:
        root = receiver_root(value)
        if type(root) is ast.Call and type(root.func) is ast.Name and root.func.id in self.tree.classes:
            return root.func.id
        return None

    def instance_ref(self, expr, frame: Frame) -> Optional[str]:
        if type(expr) is ast.Name:
            if self.names.resolve((expr.id,), frame) is not None:
                return None
            return self.instances.get(expr.id)
        owner = self_attr_owner(expr, frame)
        if owner is not None:
            return self.self_instances.get(owner)
        return None

    def _external(self, site: CallSite) -> Optional[ExternalCall]:
        func = site.node.func
        frame = site.frame
        if type(func) is ast.Call:
            ref = self.class_of_value(func, frame)
            if ref is not None and not ref.startswith("@"):
                return ExternalCall(ref, "instance", "", 0)
            return None
        ref = self.names.resolve(site.dotted, frame)
        if ref is not None:
            if _is_library(ref):
                return None
            return ExternalCall(ref, "call", "", 0, args=_arguments(site.node))
        instance = self.instance_ref(func, frame)
        if instance is not None and not instance.startswith("@"):
            return ExternalCall(instance, "instance", "", 0)
        if type(func) is ast.Attribute:
            instance = self.instance_ref(func.value, frame)
            if instance is not None and not instance.startswith("@"):
                return ExternalCall(instance, "method", func.attr, 0)
        return None

    def _self_call(self, site: CallSite) -> None:
        """selfcalls.record_self_call for a file without regions."""
        name = site.dotted
        if name is None or len(name) != 2 or name[0] != "self":
            return
        func = site.node.func
        function = site.frame.function
        key = function_key(function) if function is not None else None
        if not key or key.count(".") != 1 or key.split(".")[0] not in self.summary.classes:
            return
        owner = self.summary.functions.get(key)
        if owner is not None:
            owner.self_calls.append((func.attr, site.node))  # type: ignore[arg-type]

    def _fp32_decorated(self, frame: Frame) -> bool:
        """autocast_calls.decorator_region for a file without autocast text: `@force_fp32(...)` and
        `@custom_fwd(cast_inputs=torch.float32)` open a disabled region; the first decorator
        that decides wins."""
        for dec in frame.node.decorator_list:
            call = dec if type(dec) is ast.Call else None
            func = call.func if call is not None else dec
            qualified = absolute(dotted(func), frame.parent) or ""
            last = qualified.rsplit(".", 1)[-1] or (dotted(func) or ("",))[-1]
            if call is not None and qualified in AUTOCAST_APIS or last == "auto_fp16":
                raise Refused("an autocast decorator")
            if qualified.endswith("custom_fwd") and call is not None:
                cast = {k.arg: k.value for k in call.keywords if k.arg is not None}.get("cast_inputs")
                cast_name = dotted(cast) if cast is not None else None
                if cast_name and DTYPES.get(".".join(cast_name)) == "float32":
                    return True
            if last == "force_fp32":
                return True
        return False

    def _in_fp32(self, frame: Frame) -> bool:
        scope = frame.scope
        return scope.kind == "function" and id(scope) in self.fp32

    def _prepared(self) -> List[Tuple[str, str]]:
        """frameworks.find_settings' models a framework runs (its settings need text that
        `needs_summary` sends to LibCST)."""
        prepared: List[Tuple[str, str]] = []
        for site in self.tree.calls:
            call, frame = site.node, site.frame
            func = call.func
            if type(func) is ast.Attribute and func.attr in _PREPARE_METHODS:
                receiver = dotted(func.value)
                if receiver and not (self.names.resolve(receiver, frame) or "").startswith("torch"):
                    framework = "accelerate" if func.attr.startswith("prepare") else "fabric"
                    for keyword, star, value in call_args(call):
                        if keyword is None and not star:
                            cls = self.instance_ref(value, frame) or self.class_of_value(value, frame)
                            if cls is not None:
                                prepared.append((framework, cls))
            if len(call.keywords) < 2:  # `model=` and `args=` below: two keywords at least
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
            if "model" in keywords and "args" in keywords:
                last = (self.names.resolve(site.dotted, frame) or "").rsplit(".", 1)[-1]
                if last.endswith("Trainer") or (type(func) is ast.Name and func.id.endswith("Trainer")):
                    value = keywords["model"]
                    cls = self.instance_ref(value, frame) or self.class_of_value(value, frame)
                    if cls is not None:
                        prepared.append(("huggingface", cls))
        return sorted(set(prepared))

    # -- same-file callees (facts.callgraph.CallGraph) -------------------------------------
    def method(self, class_name: str, name: str, seen: int = 0) -> Optional[Frame]:
        cls = self.tree.classes.get(class_name)
        if cls is None or seen > 8:
            return None
        if name in cls.functions:
            return cls.functions[name]
        for base in cls.node.bases:
            base_name = dotted(base)
            if base_name and len(base_name) == 1:
                found = self.method(base_name[0], name, seen + 1)
                if found is not None:
                    return found
        return None

    def _forward(self, cls: Optional[str]) -> List[Frame]:
        if cls is None:
            return []
        found = self.method(cls, "forward") or self.method(cls, "__call__")
        return [found] if found is not None else []

    def callees(self, site: CallSite) -> List[Frame]:
        func = site.node.func
        frame = site.frame
        if type(func) is ast.Name:
            scope: Optional[Frame] = frame.scope
            while scope is not None:
                if scope.kind != "class" and func.id in scope.functions:
                    return [scope.functions[func.id]]
                scope = scope.parent
            return self._forward(self.local_instances.get(func.id))
        if type(func) is ast.Attribute:
            owner_cls = frame.class_frame
            if type(func.value) is ast.Name and func.value.id == "self" and owner_cls is not None:
                method = self.method(owner_cls.name, func.attr)
                if method is not None:
                    return [method]
                return self._forward(self.local_self_instances.get((owner_cls.name, func.attr)))
            value = func.value
            if type(value) is ast.Name:
                cls = self.local_instances.get(value.id)
            else:
                owner = self_attr_owner(value, frame)
                cls = self.local_self_instances.get(owner) if owner is not None else None
            if cls is not None:
                method = self.method(cls, func.attr)
                if method is not None:
                    return [method]
        elif type(func) is ast.Call:  # `Attn()(q, k, mask)`: a fresh instance called at once
            cls = self._local_class(func)
            if cls is not None and not _shadowed(frame, cls):
                return self._forward(cls)
        return []


def _arguments(call: ast.Call) -> Optional[Tuple[int, Tuple[str, ...]]]:
    """ExternalCall.args of `call` (summary_types.call_arguments)."""
    if any(type(arg) is ast.Starred for arg in call.args) or any(k.arg is None for k in call.keywords):
        return None
    return len(call.args), tuple(k.arg for k in call.keywords)  # type: ignore[misc]


def _is_property(frame: Frame) -> bool:
    for dec in getattr(frame.node, "decorator_list", ()):
        name = dotted(dec)
        if name and name[-1] in PROPERTIES:
            return True
    return False
