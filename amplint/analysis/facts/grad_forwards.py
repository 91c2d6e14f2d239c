"""Module forwards in an autocast region body, each with the grad mode it runs in (AMP150).

The walker reads a region body in order and records every call of a module-like object:
under `no_grad`/`inference_mode` (grad False), with grad (True) or unknown (None), with the
if/try branches it sits in, and whether the autocast cache is cleared by hand. A call of a
method or function that runs its receiver or argument forward without grad (nograd_methods.py,
in this file or as the project pass found it) counts as a no-grad forward of that object; a
helper of this file that runs its parameter forward in its body counts in the caller's mode."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from amplint.analysis.facts.context_functions import bound_locally, overrides
from amplint.analysis.facts.names import relative_ref, resolve, resolve_expr
from amplint.analysis.facts.nograd_methods import (
    NO_GRAD, EntryNoGradArgs, EntryNoGradCall, EntryNoGradFunction, EntryNoGradHeld, grad_params, nograd_forward,
    nograd_only_after, nograd_params,
)
from amplint.analysis.facts.syntax import calls_in, literal_bool
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, scope_key

SET_GRAD = ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
            "torch.autograd.grad_mode.set_grad_enabled")
ENABLE_GRAD = ("torch.enable_grad", "torch.autograd.enable_grad",
               "torch.autograd.grad_mode.enable_grad")
CLEAR_CACHE = ("torch.clear_autocast_cache", "torch._C._clear_autocast_cache")
# A method call on a model that runs (part of) its forward: `model.generate(...)` under no_grad,
# then `model(...)` with grad, share the same weights.
FORWARD_METHODS = {"forward", "generate", "module"}
_MODEL_NAME = re.compile(
    r"(model|net|module|encoder|decoder|backbone|policy|actor|critic|unet|transformer|"
    r"classifier|generator|discriminator|student|learner|\blm\b|llm)",
    re.I,
)
_BUILTINS = {"print", "len", "range", "isinstance", "super", "getattr", "setattr", "hasattr",
             "list", "tuple", "dict", "set", "zip", "enumerate", "map", "filter", "sum", "min",
             "max", "float", "int", "str", "bool", "type", "sorted", "any", "all", "iter", "next"}


@dataclass
class ForwardCall:
    node: cst.Call
    key: Tuple[str, ...]
    grad: Optional[bool]  # False under no_grad, True with grad, None when unknown
    order: int
    path: Tuple[Tuple[int, int], ...]  # (id of If/Try, branch) on the way down
    # what runs it forward without grad: "`GPT.generate` (defined at model.py:101), a `@torch.no_grad()` method"
    via: str = ""
    site: Optional[cst.Call] = None  # a helper's forward: the call of the helper in the region


NOGRAD_METHOD = ", a `@torch.no_grad()` method"


def nograd_index(entries) -> dict:
    """What the project pass found runs a forward without grad, keyed as the walker asks it:
    (scope, receiver, method) -> how, for `EntryNoGradCall`; a function's reference -> (params,
    where); ("args", scope, receiver, method) -> (params, where); ("held", scope, receiver) ->
    [(held module, how)]."""
    nograd = {(e.scope, e.receiver, e.method): f"`{e.cls}.{e.method}` (defined at {e.where}){NOGRAD_METHOD}"
              for e in entries if isinstance(e, EntryNoGradCall)}
    nograd.update({e.ref: (e.params, f"(defined at {e.where})")
                   for e in entries if isinstance(e, EntryNoGradFunction)})
    nograd.update({("args", e.scope, e.receiver, e.method): (e.params, f"(`{e.cls}.{e.method}`, defined at {e.where})")
                   for e in entries if isinstance(e, EntryNoGradArgs)})
    for e in entries:  # `guesser(x)`: a no-grad forward of the module it was built with
        if isinstance(e, EntryNoGradHeld):
            nograd.setdefault(("held", e.scope, e.receiver), []).append(
                (e.held, f"`{'.'.join(e.receiver)}` (`{e.cls}.{e.method}`, defined at {e.where}, "
                         f"runs the `{'.'.join(e.held)}` it was built with under no_grad)"))
    return nograd


def exclusive(a: Sequence[Tuple[int, int]], b: Sequence[Tuple[int, int]]) -> bool:
    """Two code paths that cannot both run: different branches of one if/try."""
    branches = dict(a)
    return any(node in branches and branches[node] != branch for node, branch in b)


def frozen_modules(facts) -> Set[Tuple[str, ...]]:
    """Modules the file freezes (`text_encoder.requires_grad_(False)`): their weights need no
    gradient, and autocast does not cache casts of weights that do not require grad."""
    found: Set[Tuple[str, ...]] = set()
    for site in facts.tree.calls:
        func = site.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "requires_grad_"
            and site.node.args
            and literal_bool(site.node.args[0].value) is False
        ):
            dotted = dotted_name(func.value)
            if dotted:
                found.add(dotted)
    return found


def module_attrs(facts) -> Set[Tuple[str, str]]:
    """(class, attr) for `self.attr = SomeClass(...)` / `nn.Linear(...)`: module-like attrs."""
    found: Set[Tuple[str, str]] = set()
    for site in facts.tree.assigns:
        value = site.value
        if not isinstance(value, cst.Call):
            continue
        name = dotted_name(value.func)
        if not name or not name[-1][:1].isupper():
            continue
        for target in site.targets:
            owner = facts.callgraph.self_attr_owner(target, site.frame)
            if owner is not None:
                found.add(owner)
    return found


def grad_mode(exprs, grad: Optional[bool], frame: Frame) -> Optional[bool]:
    """The grad mode after entering these context managers (or decorators): False under
    `no_grad`/`inference_mode`, True under `enable_grad`, None for `set_grad_enabled(flag)`."""
    for expr in exprs:
        call = expr if isinstance(expr, cst.Call) else None
        qualified = resolve_expr(call.func if call is not None else expr, frame)
        if qualified in NO_GRAD:
            grad = False
        elif qualified in ENABLE_GRAD:
            grad = True
        elif qualified in SET_GRAD and call is not None and call.args:
            grad = literal_bool(call.args[0].value)
    return grad


def outer_grad(frame: Frame, with_node: Optional[cst.With]) -> Optional[bool]:
    """The grad mode a region body starts in: False inside an enclosing `no_grad` (a with item
    next to the autocast one, an outer with, or a `@torch.no_grad()` decorator)."""
    chain = []
    current: Optional[Frame] = frame
    while current is not None:
        node = current.node
        if current.kind == "with" and isinstance(node, cst.With):
            chain.append([item.item for item in node.items])
        elif current.kind == "function" and isinstance(node, cst.FunctionDef):
            chain.append([dec.decorator for dec in node.decorators])
            break
        else:
            break
        current = current.parent
    grad: Optional[bool] = True
    for exprs in reversed(chain):
        grad = grad_mode(exprs, grad, frame.parent or frame)
    return grad


class RegionWalker:
    """Walks one region body in order; records calls of module-like objects with their grad
    mode, the if/try branches they sit in, and whether the autocast cache is cleared."""

    def __init__(self, facts, frame: Frame, region_withs, modules, nograd=None) -> None:
        self.facts = facts
        self.nograd = nograd or {}  # (scope, receiver, method) -> the method, from the project pass
        self.frame = frame
        self.region_withs = region_withs
        self.modules = modules
        self.calls: List[ForwardCall] = []
        self.cleared = False
        self.order = 0
        self.loops = 0  # loops around the statement walked, inside the region

    def block(self, stmts, grad: Optional[bool], path) -> None:
        for stmt in stmts:
            self.stmt(stmt, grad, path)

    def suite(self, suite: cst.BaseSuite, grad, path) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.block(suite.body, grad, path)
        elif isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.expr_calls(small, grad, path)

    def stmt(self, stmt, grad, path) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.expr_calls(small, grad, path)
        elif isinstance(stmt, cst.If):
            self.expr_calls(stmt.test, grad, path)
            self.suite(stmt.body, grad, path + ((id(stmt), 0),))
            if isinstance(stmt.orelse, cst.If):
                self.stmt(stmt.orelse, grad, path + ((id(stmt), 1),))
            elif stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path + ((id(stmt), 1),))
        elif isinstance(stmt, (cst.For, cst.While)):
            self.expr_calls(stmt.iter if isinstance(stmt, cst.For) else stmt.test, grad, path)
            self.loops += 1
            self.suite(stmt.body, grad, path)
            self.loops -= 1
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path)
        elif isinstance(stmt, cst.Try):
            self.suite(stmt.body, grad, path + ((id(stmt), 0),))
            for i, handler in enumerate(stmt.handlers):
                self.suite(handler.body, grad, path + ((id(stmt), i + 1),))
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, grad, path + ((id(stmt), 0),))
            if stmt.finalbody is not None:
                self.suite(stmt.finalbody.body, grad, path)
        elif isinstance(stmt, cst.With):
            if id(stmt) in self.region_withs:
                return  # a nested autocast region is a scope of its own
            for item in stmt.items:
                self.expr_calls(item.item, grad, path)
            self.suite(stmt.body, self._grad_mode(stmt, grad), path)
        # function and class definitions run later: not part of this pass

    def _grad_mode(self, node: cst.With, grad: Optional[bool]) -> Optional[bool]:
        return grad_mode([item.item for item in node.items], grad, self.frame)

    def expr_calls(self, node: cst.CSTNode, grad, path) -> None:
        for call in calls_in(node):
            self.order += 1
            dotted = dotted_name(call.func)
            if dotted and resolve(dotted, self.frame) in CLEAR_CACHE:
                self.cleared = True
                continue
            forwarded = self._forwarded_arguments(call, dotted) if grad is not None else []
            # a helper running an argument with grad and only then without: no pair at one call
            # (in a loop of the region, the next turn's grad forward follows this one's no-grad)
            later = {key for key, _node, _via, after in forwarded if after} if grad and not self.loops else set()
            for key, via in self._nograd_arguments(call, dotted):
                if key not in later:
                    self.calls.append(ForwardCall(call, key, False, self.order, path, via))
            for key, node, via, _after in forwarded:
                # `self._forward(model, ...)`: a helper of this file runs its `model` forward in
                # the caller's grad mode; with grad it is reported at the helper's forward
                if grad:
                    self.calls.append(ForwardCall(node, key, True, self.order, path, via, call))
                else:  # the helper's own call is the no-grad forward to cite
                    self.calls.append(ForwardCall(call, key, False, self.order, path,
                                            via.replace(" at line {grad_call_line}", "")))
            for key, via in (self.nograd.get(("held", scope_key(self.frame), tuple(dotted))) or ()) if dotted else ():
                self.calls.append(ForwardCall(call, key, False, self.order, path, via))
            via = self._nograd_method(call, dotted)
            if via is not None:  # `model.generate(...)`: a @no_grad method calling self(...)
                self.calls.append(ForwardCall(call, dotted[:-1], False, self.order, path, via))
                continue
            key = self._module_key(call)
            if key is not None:
                self.calls.append(ForwardCall(call, key, grad, self.order, path))

    def _nograd_method(self, call: cst.Call, dotted) -> Optional[str]:
        """`receiver.m(...)` where `m` is a method decorated no_grad that calls `self(...)`: of a
        class of this file the receiver is an instance of, or as the project pass found it."""
        if not dotted or len(dotted) < 2 or dotted[-1] == "forward":
            return None
        if self.nograd:
            found = self.nograd.get((scope_key(self.frame), tuple(dotted[:-1]), dotted[-1]))
            if found is not None:
                return found
        func = call.func
        assert isinstance(func, cst.Attribute)
        graph = self.facts.callgraph
        cls = graph.class_of_instance(func.value, self.frame)
        if cls is not None and nograd_forward(graph.method(cls, dotted[-1])):
            return f"`{cls}.{dotted[-1]}`{NOGRAD_METHOD}"
        return None

    def _nograd_arguments(self, call: cst.Call, dotted):
        """(receiver key, how) for the arguments `f(model, ...)` runs forward without grad: `f`
        calls that parameter under no_grad, a function of this file or, as the project pass
        found, of another (`@torch.no_grad() def pseudo_label(model, ...)` in utils/ssl.py)."""
        if not dotted:
            return []
        params, where = (), ""
        if len(dotted) > 1 or not bound_locally(self.frame, dotted[0]):
            for callee in self.facts.callgraph.callees(CallSite(call, self.frame, None, None, None)):
                params = nograd_params(callee)
                if params and any(nograd_params(other) != params
                                  for other in overrides(self.facts.regions, call, self.frame, callee)):
                    params = ()  # a subclass of this file overrides it: which one runs is not known
        if not params and self.nograd and len(dotted) > 1:
            found = self.nograd.get(("args", scope_key(self.frame), tuple(dotted[:-1]), dotted[-1]))
            if found is not None:
                params, where = found
        if not params and self.nograd:
            found = self.nograd.get(resolve(dotted, self.frame) or relative_ref(dotted, self.frame) or "")
            if isinstance(found, tuple):
                params, where = found
        out = []
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return []
        for index, name in params:
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and 0 <= index < len(positional):
                arg = positional[index]
            key = dotted_name(arg.value) if arg is not None else None
            if key:
                where_text = f" {where}" if where else ""
                out.append((tuple(key), f"`{'.'.join(dotted)}`{where_text}, which runs its `{name}` under no_grad"))
        return out

    def _forwarded_arguments(self, call: cst.Call, dotted):
        """(receiver key, the helper's forward, how) for the arguments a function of this file
        called here runs forward in the caller's grad mode (nograd_methods.grad_params): every
        function the call may run (a subclass of this file overriding a method included) does
        it alike."""
        if not dotted or (len(dotted) == 1 and bound_locally(self.frame, dotted[0])):
            return []
        callees = self.facts.callgraph.callees(CallSite(call, self.frame, None, None, None))
        if len(callees) != 1 or callees[0] is self.frame.function:
            return []
        callee = callees[0]
        params = grad_params(callee)
        others = overrides(self.facts.regions, call, self.frame, callee) if params else ()
        if any([p[:2] for p in grad_params(other)] != [p[:2] for p in params] for other in others):
            return []
        # a starred argument hides the positions after it; a parameter bound before it, or by
        # name, is that argument (`*args` or `**kwargs` binding it too would raise a TypeError)
        positional = []
        for a in call.args:
            if a.star:
                break
            if a.keyword is None:
                positional.append(a)
        out = []
        for index, name, node in params:
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and 0 <= index < len(positional):
                arg = positional[index]
            key = dotted_name(arg.value) if arg is not None else None
            if key:
                how = f"`{'.'.join(dotted)}(...)` at line {{grad_call_line}}, which runs its `{name}` forward"
                out.append((tuple(key), node, how, nograd_only_after(callee, name, node)))
        return out

    def _module_key(self, call: cst.Call) -> Optional[Tuple[str, ...]]:
        dotted = dotted_name(call.func)
        if not dotted:
            return None
        while len(dotted) > 1 and dotted[-1] in FORWARD_METHODS:
            dotted = dotted[:-1]
        if dotted[0] in _BUILTINS or resolve(dotted, self.frame) is not None:
            return None
        if len(dotted) == 1:
            if dotted[0] in self.facts.callgraph.instances or _MODEL_NAME.search(dotted[0]):
                return dotted
            return None
        if dotted[0] == "self" and len(dotted) == 2:
            cls = self.frame.class_frame
            if cls is not None and self.facts.callgraph.method(cls.name, dotted[1]) is not None:
                return None  # `self.parse_unet_output(...)`: a method of the class, no module
            if cls is not None and (
                (cls.name, dotted[1]) in self.modules
                or (cls.name, dotted[1]) in self.facts.callgraph.self_instances
            ):
                return dotted
            return dotted if _MODEL_NAME.search(dotted[1]) else None
        return dotted if _MODEL_NAME.search(dotted[-1]) else None
