"""The GradScaler protocol across files: per-function protocol summaries, composed at the calls
the file's own call graph cannot follow.

A helper in `utils.py` calls `accelerator.unscale_gradients(optimizer)` and the loop in
`train.py` then calls `accelerator.clip_grad_norm_`; a mixin in `mixins.py` provides
`clip_gradients()`, called through `self.` between `scaler.scale(loss).backward()` and
`scaler.step(opt)`. Each file whose text holds a scaler or framework-verb word (`CALLER_WORDS`)
is summarised (`summarize_scaler`): the calls of its functions that the file's call graph
leaves unresolved (`self.m()` of a class with bases, a bare name imported from elsewhere, a
local or parameter called in a function with protocol events: the class flow's value),
and the composed protocol events of each of its functions. The project resolves those calls
over the summaries (scaler_resolution.py).

A callee that creates its own scaler (a local `GradScaler()`) is not summarised, as within a file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.scaler_arms import flag_ifs, flag_params
from amplint.analysis.facts.scaler_keys import own_single_passes
from amplint.analysis.facts.scaler_paths import optimizer_loops
from amplint.analysis.facts.scaler_protocol import PROTOCOL, function_flows
from amplint.analysis.facts.scaler_renaming import none_defaults
from amplint.analysis.facts.scaler_remote import call_keys, function_key
from amplint.analysis.facts.subclass_overrides import abstract
from amplint.analysis.facts.scalers import SCALER_TRIGGERS
from amplint.analysis.facts.names import binding_scope
from amplint.analysis.facts.scaler_flags import scaler_flag
from amplint.analysis.facts.gradient_backward import gradient_backward
from amplint.analysis.facts.scaler_flow import key_text, tensor_backward
from amplint.analysis.parsing import parse
from amplint.analysis.project.code_blanking import blank_code
from amplint.analysis.project.lines import call_anchors, node_lines
from amplint.analysis.facts.tree import dotted_name, iter_nodes
from amplint.analysis.project.relative_names import Names, relative_imports
from amplint.analysis.project.scaler_closures import factory_of, imported_factory

# Text a file whose functions can hold scaler events holds (the prefilter of the callers)
CALLER_WORDS = SCALER_TRIGGERS + ("unscale_gradients", "clip_grad_norm_", "clip_grad_value_")
# ... or both of these: a method that backpropagates and leaves the scaler to one it inherits
# (speechbrain's recipes override `Brain.fit_batch` and call `self.optimizers_step()`)
CALLER_PAIR = (".backward(", "self.")
# Text without which no function of a file has a protocol event (a scale, backward, unscale,
# clip, step or update of a scaler, an optimizer's step, a framework verb): callees without it
# are not parsed
CALLEE_WORDS = CALLER_WORDS + ("backward", "clip", ".step(", "update_params")
_MAX_CALLS = 400  # per file: the unresolved calls a summary records
# imports never resolved into the project: the standard library, torch, numpy
_LIBRARIES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"torch", "numpy"}


@dataclass
class ScalerSummary:
    path: str
    # function key -> (positional parameters, `self` dropped for methods; keyword-only; events)
    functions: Optional[Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...], tuple]]] = field(
        default_factory=dict)
    # (function key, call text, ordinal, "self" | "template" | "name" | "value" | "wrapper" | "held"
    # | "closure", the name, class key of the method or ""); "template": `self.m()` in a method of a
    # class whose `m` is abstract or missing, which runs the subclasses' `m` (subclass_overrides.py)
    calls: List[Tuple[str, str, int, str, str, str]] = field(default_factory=list)
    # what resolving those calls needs of this file, as its region summary would say it (so
    # that the project pass need not make that summary): module-level imports, relative ones
    # included, and each module-level class's bases ("@Local", a reference, "?unknown")
    imports: Dict[str, str] = field(default_factory=dict)
    bases: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # the calls of `calls` that pass a scaler enabled by a flag of an object they also pass
    # (scaler_flags.py): (index in `calls`, the scaler's slot, the object's slot, the flag's
    # attribute, the object's name here, the call's line); a slot is a position or a keyword
    flags: Tuple[Tuple[int, object, object, str, str, int], ...] = ()
    # the calls of `calls` whose value matters (return_values.py): bound once to a local that
    # the function then calls, or iterates over
    wanted: Tuple[int, ...] = ()
    # module function key -> the closure it returns (`make_step` -> "make_step.step", a key of
    # `functions`), the factory's positional and keyword-only parameters, and those of them it
    # never binds again (the closure's free names that stand for the factory call's arguments)
    closures: Dict[str, Tuple[str, Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]] = field(
        default_factory=dict)
    # function key -> the scalers it updates itself, as it names them (`optimizer.scaler`): a
    # method of another file it calls on an instance leaves the update to it (EntryCallerUpdate)
    updates: Dict[str, Tuple[str, ...]] = field(default_factory=dict)


def is_caller(text) -> bool:
    """Whether a file's text (or its bytes) may hold a call to compose: a caller summary."""
    if isinstance(text, bytes):
        return any(word in text for word in _CALLER_BYTES) or all(word in text for word in _PAIR_BYTES)
    return any(word in text for word in CALLER_WORDS) or all(word in text for word in CALLER_PAIR)


_CALLER_BYTES = tuple(word.encode() for word in CALLER_WORDS)
_PAIR_BYTES = tuple(word.encode() for word in CALLER_PAIR)


def composes_calls(text: str) -> bool:
    """Whether a file gets a caller summary (`summarize_scaler(..., force=False)`, here, in the
    pool and in the first pass alike): `is_caller`, its pair's `.backward(` in code, not only in
    comments and plain strings (a docstring's `>>> loss.backward()`: nothing backpropagates)."""
    if any(word in text for word in CALLER_WORDS):
        return True
    if not all(word in text for word in CALLER_PAIR):
        return False
    code, sure = blank_code(text)
    return not sure or CALLER_PAIR[0] in code


def summarize_scaler(path: str, module: cst.Module, facts, force: bool = True,
                     source: Optional[str] = None) -> ScalerSummary:
    """One file's protocol summary, from its FileFacts (made without project entries). Without
    `force`, a file with no call to follow gets no `functions` (None: not computed). `source`:
    the text `module` was parsed from (lines without generating the module's code)."""
    summary = ScalerSummary(path)
    analysis = facts.scalers
    graph = facts.callgraph
    keys = call_keys(facts.tree)
    module_frame = facts.tree.module_frame
    names = Names(relative_imports(module))
    summary.imports = {**module_frame.imports, **names.relative}
    imported = {name for name, ref in summary.imports.items()
                if ref.split(".", 1)[0] not in _LIBRARIES}
    for name, frame in facts.tree.classes.items():
        if frame.parent is module_frame:
            summary.bases[name] = tuple(
                _base_ref(arg.value, names, facts.tree, module_frame)
                for arg in frame.node.bases if arg.keyword is None
            )
    flows: Optional[list] = None  # the functions with protocol events, made when first needed
    composed: Set[int] = set()  # ids of their frames and of the file's functions they call
    flagged: List[Tuple[int, object]] = []
    wanted: List[int] = []
    uses: Dict[int, Dict[int, str]] = {}  # id(scope) -> id(call bound to a local) -> the local
    held: List[Tuple[str, str, int, str, str, str]] = []  # `self.a.m(...)`: after the others
    for site in facts.tree.calls:
        key = keys.get(id(site.node))
        if key is None or len(summary.calls) >= _MAX_CALLS:
            continue
        func = site.node.func
        function = site.frame.function
        callees = graph.callees(site) if graph is not None else []
        if callees and _template_hook(site, callees):  # `self.m()` of an abstract `m` of this file
            summary.calls.append(key + ("template", func.attr.value, ""))
            continue
        if callees:
            if _used_scaler(func, analysis, function):  # the file's call graph reads it by name
                summary.calls.append(key + ("wrapper", f"{func.value.value}.{func.attr.value}", ""))
            continue
        factory = imported_factory(graph, site, imported)
        if factory is not None:  # `self.step()` of `self.step = training.make_step(...)`
            summary.calls.append(key + ("closure", factory, ""))
            continue
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            cls = function.class_frame if function is not None else None
            root = func.value.value
            if root == "self" and cls is not None and cls.node.bases:
                summary.calls.append(key + ("self", func.attr.value, function_key(cls) or ""))
            elif root == "self" and cls is not None and function.parent is cls:
                summary.calls.append(key + ("template", func.attr.value, ""))  # only subclasses define it
            elif root in imported:  # `steps.train_step(...)` of `import pkg.steps as steps`
                summary.calls.append(key + ("name", f"{root}.{func.attr.value}", ""))
            elif (root != "self" and function is not None and root in function.bindings
                  and not _walked(site.node, analysis, function, named=True)):
                if flows is None:
                    flows = _protocol_flows(analysis)
                    composed = _composed_frames(flows, facts.tree.calls, graph)
                if id(function) not in composed:
                    continue
                # `optimizer.step_and_update_lr()`: a method of the class flow's instance
                kind = "wrapper" if _used_scaler(func, analysis, function) else "value"
                summary.calls.append(key + (kind, f"{root}.{func.attr.value}", ""))
        elif _held_call(func, function) and not _walked(site.node, analysis, function, held=True):
            # `self.mp_trainer.backward(loss)`: a method of the instance an attribute holds
            held.append(key + ("held", f"{func.value.attr.value}.{func.attr.value}", ""))
            continue  # recorded after the others: no flag, no value asked
        elif isinstance(func, cst.Name) and func.value in imported:
            summary.calls.append(key + ("name", func.value, ""))
        elif isinstance(func, cst.Name) and function is not None and func.value in function.bindings:
            if flows is None:
                flows = _protocol_flows(analysis)
                composed = _composed_frames(flows, facts.tree.calls, graph)
            if id(function) not in composed:
                continue
            summary.calls.append(key + ("value", func.value, ""))  # `clipper(params)`: the class flow's value
        elif (site.dotted and len(site.dotted) > 2 and site.dotted[0] in imported
              and _value_used(site, uses)):  # `moco.optimizer.build(...)` of `import moco.optimizer`
            summary.calls.append(key + ("name", ".".join(site.dotted), ""))
        else:
            continue
        if passes_scaler(site.node):
            flagged.append((len(summary.calls) - 1, site))
        if _value_used(site, uses):
            wanted.append(len(summary.calls) - 1)
    summary.calls.extend(held[:max(0, _MAX_CALLS - len(summary.calls))])
    if flagged:
        summary.flags = _flags(analysis, module, flagged, source)
    summary.wanted = tuple(wanted)
    if not force and not summary.calls:
        summary.functions = None
        return summary
    flows = _protocol_flows(analysis) if flows is None else flows
    nodes = [e.inner or e.node for f in flows for e in f.events]
    lines = node_lines(module, nodes, source, _anchors(facts, flows) if source else None) if nodes else {}
    for flow in flows:
        updated = sorted({str(e.scaler) for e in flow.events
                          if e.kind == "update" and e.origin is None and e.scaler is not None})
        if updated:
            summary.updates[function_key(flow.frame) or ""] = tuple(updated)
        outer = factory_of(facts, flow.frame)
        entry = _function(flow, module, lines, outer[3] if outer else (), facts.tree)
        if entry is not None:
            summary.functions[function_key(flow.frame) or ""] = entry
            if outer is not None:
                summary.closures[outer[0]] = (function_key(flow.frame) or "",) + outer[1:]
    return summary


def _held_call(func, function) -> bool:
    """`self.a.m(...)` in a method: `m` of whatever object the attribute `a` holds."""
    return (type(func) is cst.Attribute and type(func.value) is cst.Attribute
            and type(func.value.value) is cst.Name and func.value.value.value == "self"
            and function is not None and function.class_frame is not None)


def _template_hook(site, callees) -> bool:
    """`self.m()` that the file's call graph resolves only to an abstract `m` of the caller's
    class (its own or a base's): the subclasses of other files define the one that runs."""
    func = site.node.func
    function = site.frame.function
    return (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == "self" and function is not None
            and function.parent is not None and function.parent.kind == "class"
            and all(abstract(callee) for callee in callees))


def _used_scaler(func, analysis, function) -> bool:
    """`x.m` of a local or parameter `x` that is a scaler only by its use (scaler_wrappers.py:
    the class flow may know it holds a wrapper class's instance; asked in its own file too)."""
    if not (type(func) is cst.Attribute and type(func.value) is cst.Name) or function is None:
        return False
    if func.value.value == "self" or func.value.value not in function.bindings:
        return False
    info = analysis.info(analysis.ref(func.value.value, function))
    return info is not None and info.used_only


def _walked(call: cst.Call, analysis, function, named: bool = False, held: bool = False) -> bool:
    """`x.m(...)` the flow walker reads itself and never follows into a callee (FlowWalker.expr):
    a method of a scaler, a plain `x.step()`, a tensor's `x.backward()`. `named`: a scaler known
    only by its use (`loss_scaler.step(optimizer)` of a parameter) is asked of the project too:
    it may hold a wrapper class's instance (scaler_wrappers.held_wrapper). `held`: `self.x.step()`
    is asked too: the walker composes a method `step` with events before it takes it for a
    plain optimizer's (OpenNMT's `self.optim.step()` of its `Optimizer` wrapper)."""
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method == "step" and not call.args and not held or method == "backward" and tensor_backward(call):
        return True
    if method == "backward":
        site = analysis.sites.get(id(call))
        if gradient_backward(call, site.frame if site is not None else None, analysis.tree):
            return True
    info = analysis.info(analysis.ref(key_text(call.func.value), function))  # type: ignore[attr-defined]
    return info is not None and not (named and info.used_only)


def _anchors(facts, flows) -> dict:
    """`node_lines`' anchors of the events' nodes: the call sites', and each event's own
    statement line (a composed event's inner node is its callee's event's node)."""
    anchors = call_anchors(facts.tree.calls)
    for flow in flows:
        for event in flow.events:
            if event.stmt is not None and event.inner is None:
                anchors[id(event.node)] = event.stmt
    return anchors


def _protocol_flows(analysis) -> list:
    return [f for f in function_flows(analysis) if any(e.kind in PROTOCOL for e in f.events)]


def _composed_frames(flows, calls, graph) -> Set[int]:
    """The frames of the protocol functions and of every function of the file they call,
    directly or through each other (the walker composes those callees' events into the
    caller: a call in one of them into another file is composed there too, as detectron2's
    `TrainerBase.after_backward` runs each hook's `after_backward` for `run_step`)."""
    reached = {id(flow.frame) for flow in flows}
    if graph is None or not reached:
        return reached
    by_frame: Dict[int, list] = {}
    for site in calls:
        if site.frame.function is not None:
            by_frame.setdefault(id(site.frame.function), []).append(site)
    todo = list(reached)
    while todo:
        for site in by_frame.get(todo.pop(), ()):
            for callee in graph.callees(site):
                if id(callee) not in reached:
                    reached.add(id(callee))
                    todo.append(id(callee))
    return reached


def _value_used(site, uses: Dict[int, Dict[int, str]]) -> bool:
    """The call's value is bound once to a local of its function (`Frame.aliases`) that the
    function calls (`clip_grad(...)`) or loops over (`for opt in optimizers`)."""
    scope = site.frame.scope
    if scope.kind != "function" or not scope.aliases:
        return False
    names = uses.get(id(scope))
    if names is None:
        names = uses[id(scope)] = {id(value): name for name, value in scope.aliases.items()
                                   if isinstance(value, cst.Call)}
    name = names.get(id(site.node))
    if name is None:
        return False
    if any(c.dotted == (name,) for c in scope.calls):
        return True
    # a function with a call bound to a local: its loops' iterables, walked once
    iterated = uses.get(-id(scope))
    if iterated is None:
        iterated = uses[-id(scope)] = {id(n): n.iter.value for n in iter_nodes(scope.node)
                                       if isinstance(n, cst.For) and isinstance(n.iter, cst.Name)}
    return name in iterated.values()


def passes_scaler(call: cst.Call) -> bool:
    """A call with a name argument whose text says scaler (cheap: the rest is `_flags`')."""
    return any(
        isinstance(a.value, (cst.Name, cst.Attribute)) and "caler" in (key_text(a.value) or "")
        for a in call.args
    ) and not any(a.star for a in call.args)


def _flags(analysis, module: cst.Module, flagged, source: Optional[str] = None) -> tuple:
    """`ScalerSummary.flags` for the recorded calls that pass a scaler of this file created
    with `enabled=<name>.<attr>` together with that very `<name>`."""
    found = []
    for index, site in flagged:
        slots = {}
        for position, arg in enumerate(a for a in site.node.args if a.keyword is None):
            slots[id(arg)] = position
        for arg in site.node.args:
            if arg.keyword is not None:
                slots[id(arg)] = arg.keyword.value
        for arg in site.node.args:
            flag = scaler_flag(analysis, analysis.ref(key_text(arg.value), site.frame))
            if flag is None or flag.cite is not None:
                continue
            scope = binding_scope(site.frame, flag.root)
            if scope is None or id(scope) != flag.scope:
                continue
            roots = [a for a in site.node.args
                     if isinstance(a.value, cst.Name) and a.value.value == flag.root]
            if len(roots) != 1:
                continue
            found.append((index, slots[id(arg)], slots[id(roots[0])], flag.attr, flag.root, site.node))
    if not found:
        return ()
    anchors = call_anchors(site for _, site in flagged) if source else None
    lines = node_lines(module, [f[5] for f in found], source, anchors)
    return tuple(f[:5] + (lines.get(id(f[5]), 0),) for f in found)


def _base_ref(expr, names: Names, tree, frame) -> str:
    """A base class as the region summary writes it (summary.py `_class_ref`)."""
    name = dotted_name(expr)
    if name and len(name) == 1 and name[0] in tree.classes and name[0] not in frame.imports:
        return "@" + name[0]
    return names.resolve(name, frame) or "?" + ".".join(name or ())


def _function(flow, module: cst.Module, lines: Dict[int, int], free: Tuple[str, ...] = (), tree=None):
    frame = flow.frame
    params = frame.node.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    static = any(
        isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
        for d in frame.node.decorators
    )
    if frame.class_frame is not None and positional and not static:
        positional = positional[1:]
    keywords = tuple(p.name.value for p in params.kwonly_params)
    names = set(positional) | set(keywords) | set(free)
    numbers: Dict[int, int] = {}
    per_optimizer = optimizer_loops(flow.events)
    onces = own_single_passes(flow.events, frame, tree) if tree is not None else {}
    events = []
    for event in flow.events:
        if event.kind not in PROTOCOL and event.kind != "zero_grad":
            continue  # a `zero_grad` too: AMP122 asks what it clears (cleared_between)
        scaler = str(event.scaler) if event.scaler is not None else ""
        root = scaler.split(".", 1)[0]
        if scaler and root not in names and root != "self":
            return None  # its own scaler (local or module-level): a protocol of its own
        node = event.inner or event.node
        events.append((
            event.kind, scaler, event.arg or "", bool(event.backward), event.framework or "",
            _ctx(event.ctx, numbers, module, per_optimizer, onces), lines.get(id(node), 0),
            _text(node, module),
        ))
    if not any(e[0] in PROTOCOL for e in events):
        return None
    return (tuple(positional), keywords, tuple(events), none_defaults(frame.node), _flags_of(frame, numbers))


def _flags_of(frame, numbers: Dict[int, int]) -> tuple:
    """(the numbers of the callee's own `if`s that test a bare parameter it never binds again,
    (parameter, its literal default's truth) of those parameters): a caller in another file
    decides those arms by the literal it passes or leaves at its default (facts/scaler_arms.py)."""
    params = flag_params(frame.node)
    ifs = flag_ifs(frame, params)
    arms = tuple(sorted(number for node, number in numbers.items() if node in ifs))
    if not arms:
        return ()
    return arms, tuple((name, truth) for name, truth in params.items() if truth is not None)


def _ctx(ctx, numbers: Dict[int, int], module: cst.Module, per_optimizer=frozenset(),
         onces=None) -> tuple:
    out = []
    for item in ctx:
        number = numbers.setdefault(id(item.node), len(numbers))
        if not hasattr(item, "index"):
            each = id(item.node) in per_optimizer
            once = onces.get(id(item.node)) if onces else None
            out.append(("L", number, each) + once if once else ("L", number, True) if each else ("L", number))
            continue
        test = module.code_for_node(item.node.test).strip() if isinstance(item.node, cst.If) else ""
        out.append(("B", number, item.index, item.cond or "", bool(item.positive), test))
    return tuple(out)


def _text(node, module: cst.Module) -> str:
    func = node.func if isinstance(node, cst.Call) else node
    text = " ".join(module.code_for_node(func).split())
    return text.replace("{", "(").replace("}", ")") + "(...)"  # messages format {placeholders}


def local_summaries(files: Mapping[str, str], paths: Sequence[str], force: bool,
                    modules: Optional[Mapping[str, object]] = None) -> Dict[str, Optional[ScalerSummary]]:
    """Protocol summaries made here, from the texts (`modules`: trees already parsed)."""
    found: Dict[str, Optional[ScalerSummary]] = {}
    for path in paths:
        text = files[path]
        if not (any(word in text for word in CALLEE_WORDS) if force else composes_calls(text)):
            found[path] = None
            continue
        try:
            module = (modules or {}).get(path)
            source = None if module else text  # a tree given: its text is not known here
            module = module or parse(text)
            found[path] = summarize_scaler(path, module, FileFacts(module), force, source)
        except Exception:  # unparsable or an analysis bug: no protocol to compose
            found[path] = None
    return found
