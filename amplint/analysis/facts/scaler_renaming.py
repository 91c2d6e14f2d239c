"""How a call of a function of the same file renames the callee's scaler and optimizer names
into the caller's (facts/scaler_protocol.py composes the callee's events through it): a
parameter becomes the argument the call passes, a method's `self` the object it is called on,
a closure's free name its factory call's argument; and which `None`-default parameters the call
leaves unset, so that an arm testing one never runs for it."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.loop_bindings import BoundNames
from amplint.analysis.facts.scaler_flow import key_text
from amplint.analysis.facts.tree import Frame


def none_defaults(node) -> Tuple[str, ...]:
    """The parameters of a `def` whose default is `None` (`def step(opt, scaler=None)`) and
    that its body never binds again (`scaler = scaler or GradScaler()` would make a test of it
    say nothing about the call)."""
    params = node.params
    found = tuple(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                  if isinstance(p.default, cst.Name) and p.default.value == "None")
    if not found:
        return ()
    rebound = BoundNames(set(found))
    node.body.visit(rebound)
    return tuple(name for name in found if name not in rebound.names)


def dead_arm(branches, unbound: Set[str]) -> Optional[str]:
    """An event in an arm that needs a parameter the call leaves at its `None` default to be
    set (`if scaler is not None:`, `if scaler:`): that arm never runs for this call."""
    return next((cond[:-len(" is not None")] for cond, positive in branches
                 if cond is not None and positive and cond.endswith(" is not None")
                 and cond[:-len(" is not None")] in unbound), None)


def positional_params(call: cst.Call, callee: Frame) -> List[str]:
    params = callee.node.params  # type: ignore[attr-defined]
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(call.func, cst.Attribute) and callee.class_frame is not None and positional:
        positional = positional[1:]  # the bound `self`
    return positional


def bound_receiver(analysis, call: cst.Call, callee: Frame) -> Optional[str]:
    """The caller's text of the object a method of the file is called on, when the call binds
    the method's `self` to it: `x.m()` on an instance (a local, a parameter, `self.x`), never
    through `self` (the caller's own attributes), a class (`Cls.m(obj)` binds no `self`) or a
    static or class method."""
    func = call.func
    if not isinstance(func, cst.Attribute) or callee.class_frame is None:
        return None
    params = callee.node.params  # type: ignore[attr-defined]
    first = (*params.posonly_params, *params.params)[:1]
    if not first or first[0].name.value != "self" or callee.node.decorators:  # type: ignore[attr-defined]
        return None
    text = key_text(func.value)
    if text is None or text in ("self", "cls") or text.split(".", 1)[0] == "super" or text in analysis.tree.classes:
        return None
    return text


def keyword_params(callee: Frame) -> List[str]:
    return [p.name.value for p in callee.node.params.kwonly_params]  # type: ignore[attr-defined]


class CallRenamer:
    """The callee's names as the caller sees them."""

    def __init__(self, analysis, call: cst.Call, positional, keywords, caller: Frame) -> None:
        self.analysis = analysis
        self.caller = caller
        func = call.func
        self.via_self = (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        )
        positional = list(positional)
        self.starred = any(a.star for a in call.args)
        self.params: Set[str] = set(positional) | set(keywords)
        self.bound: Dict[str, Optional[str]] = {}
        for index, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
            if index < len(positional):
                self.bound[positional[index]] = key_text(arg.value)
        for arg in call.args:
            if arg.keyword is not None:
                self.bound[arg.keyword.value] = key_text(arg.value)
        self.outer: Optional["CallRenamer"] = None  # a closure's: its factory call's names
        self.factory: Optional[Frame] = None
        # the outer call is written in another method (`self.step = make_step(self.opt, ...)`
        # in `setup`): only its `self.` arguments name the same objects here
        self.elsewhere = False
        self.outer_names: Optional[Set[str]] = None  # a remote factory's never-rebound parameters
        # the object a method is called on (`optimizer` of `optimizer.step_and_update_lr()`):
        # the callee's `self`, so its `self._optimizer` is the caller's `optimizer._optimizer`
        self.receiver: Optional[str] = None
        # `self.attr` -> the caller's name of what the receiver's constructor stored there
        # (facts/scaler_stored.py)
        self.stored: Dict[str, str] = {}

    def unbound(self, none_defaults) -> Set[str]:
        """Those of `none_defaults` the call leaves unbound (nothing when it passes `*args` or
        `**kwargs`: they may bind any)."""
        if self.starred:
            return set()
        return {name for name in none_defaults if name not in self.bound}

    def text(self, text: str) -> Optional[str]:
        root, _, rest = text.partition(".")
        if root in self.params:
            mapped = self.bound.get(root)
            return None if mapped is None else mapped + ("." + rest if rest else "")
        if self.outer is not None:
            # a free name of the closure: the factory's parameter, never rebound there, is what
            # the factory call passed; anything else the factory or the closure holds is theirs
            if root not in self.outer.params:
                return None
            if self.factory is not None and not self.analysis.tree.bound_once(self.factory, root):
                return None
            if self.outer_names is not None and root not in self.outer_names:
                return None
            mapped = self.outer.text(text)
            if mapped is not None and self.outer.elsewhere and not self._same_object(mapped):
                return None
            return mapped
        if root == "self" and not self.via_self:
            if self.receiver is None or "self" in self.params:
                return None  # another object's attribute
            attr, _, tail = rest.partition(".")
            if "self." + attr in self.stored:
                return self.stored["self." + attr] + ("." + tail if tail else "")
            return self.receiver + ("." + rest if rest else "")
        return text

    def _same_object(self, mapped: str) -> bool:
        """Whether the factory call's argument `mapped`, written in another scope, names the
        same object here: a `self.` attribute (the factory call in another method), or a
        module-level name bound once that the calling function does not shadow (the factory
        call at module level)."""
        root = mapped.split(".", 1)[0]
        outer = self.outer
        if outer is None or outer.caller.kind != "module":
            return root == "self"
        tree = self.analysis.tree
        return tree.bound_once(outer.caller, root) and self.analysis.ref(mapped, self.caller).scope == id(outer.caller)

    def scaler(self, ref):
        if str(ref).split(".", 1)[0] == "self" and not self.via_self:
            # the receiver's scaler: the caller's name for it when the caller uses it too
            # (`wrapper.scaler.unscale_(opt)` before `wrapper.step()`), else known by what
            # the class makes of `self.` only
            mapped = self.text(str(ref)) if self.receiver is not None else None
            caller_ref = self.analysis.ref(mapped, self.caller) if mapped else None
            return caller_ref if caller_ref in self.analysis.infos else ref
        mapped = self.text(str(ref))
        if mapped is None:
            return ref  # the callee's own: a scaler the caller cannot name
        caller_ref = self.analysis.ref(mapped, self.caller)
        if caller_ref in self.analysis.infos or str(ref) != mapped:
            return caller_ref
        return ref  # `self.scaler` known only in the base class that defines the method
