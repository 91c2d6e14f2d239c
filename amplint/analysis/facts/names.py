"""Import and alias resolution: which raw dotted names mean which torch objects."""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from amplint.analysis.facts.tree import Dotted, Frame, dotted_name

# Spellings that reach the same object; resolution maps them to the first form.
_CANONICAL = {
    "torch.amp.autocast_mode.autocast": "torch.amp.autocast",
    "torch.autocast": "torch.amp.autocast",
    "torch.cuda.amp.autocast_mode.autocast": "torch.cuda.amp.autocast",
    "torch.cpu.amp.autocast_mode.autocast": "torch.cpu.amp.autocast",
    "torch.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler": "torch.cuda.amp.GradScaler",
    "torch.nn.modules.loss.BCELoss": "torch.nn.BCELoss",
    "torch.nn.modules.loss.BCEWithLogitsLoss": "torch.nn.BCEWithLogitsLoss",
}


def visible_scopes(frame: Frame) -> Iterator[Frame]:
    """The scopes whose names `frame` sees, innermost first: its own scope, then the enclosing
    ones except class bodies (a class body does not enclose its methods' names)."""
    scope: Optional[Frame] = frame.scope
    while scope is not None:
        if scope.kind != "class" or scope is frame.scope:
            yield scope
        scope = scope.parent


def binding_scope(frame: Frame, name: str) -> Optional[Frame]:
    """The scope whose binding of `name` `frame` sees (None: an import or a builtin)."""
    for scope in visible_scopes(frame):
        if name in scope.imports:
            return None
        if name in scope.bindings:
            return scope
        if scope.kind == "function":
            params = scope.node.params
            if any(p.name.value == name for p in (*params.posonly_params, *params.params,
                                                  *params.kwonly_params)):
                return scope
    return None


# What `partial(f, kw=...)` may not stand for at its calls: rules read these functions' and these
# keywords' values (device, dtype, enabled), which the partial holds and the call does not show.
_KEYWORD_READERS = frozenset({
    "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
    "torch.amp.GradScaler", "torch.cuda.amp.GradScaler",
})
_READ_KEYWORDS = frozenset({
    "dtype", "device", "device_type", "enabled", "cache_enabled", "out", "init_scale",
    "growth_interval", "layout",
})


def resolve(dotted: Optional[Dotted], frame: Frame, depth: int = 0,
            aliases: bool = True) -> Optional[str]:
    """The qualified name `dotted` refers to in `frame`, or None when its root is not an import
    (a local variable, a parameter, or a name that shadows the import). A root bound once to
    an import's attribute (`loss_func = F.binary_cross_entropy`, `clip = partial(
    torch.nn.utils.clip_grad_norm_, max_norm=1.0)`; `Frame.aliases`) means what that names,
    unless `aliases` is False (what the text spells: AMP130 reports the alias's own line)."""
    if not dotted:
        return None
    root, rest = dotted[0], dotted[1:]
    for scope in visible_scopes(frame):
        if root in scope.imports:
            full = ".".join((scope.imports[root],) + rest)
            return _CANONICAL.get(full, full)
        if root in scope.bindings:
            value = scope.aliases.get(root) if aliases else None
            if value is None or depth > 4:
                return None
            target = _alias_target(value, scope, depth + 1)
            if target is None:
                return None
            full = ".".join((target,) + rest)
            return _CANONICAL.get(full, full)
    return None


def _alias_target(value: cst.BaseExpression, scope: Frame, depth: int) -> Optional[str]:
    if not isinstance(value, cst.Call):
        return resolve(dotted_name(value), scope, depth)
    if not value.args or value.args[0].keyword is not None or value.args[0].star or any(
        arg.keyword is None or arg.star for arg in value.args[1:]
    ) or resolve(dotted_name(value.func), scope, depth) != "functools.partial":
        # not `partial(f, kw=...)` (positional arguments bound are not `f` at its calls): what
        # a project function of another file returns to this call, if the project knows it
        return _returned_target(value, scope)
    if any(arg.keyword.value in _READ_KEYWORDS for arg in value.args[1:]):
        return None
    target = resolve(dotted_name(value.args[0].value), scope, depth)
    return None if target in _KEYWORD_READERS else target


def _returned_target(call: cst.Call, scope: Frame) -> Optional[str]:
    """The outside function a project function of another file returns to `call`
    (facts/returned_values.py EntryReturn.target), or None."""
    top = scope
    while top.parent is not None:
        top = top.parent
    if not top.returned:
        return None
    entry = top.returned.get(id(call))
    return getattr(entry, "target", None) or None


def through_partial(dotted: Optional[Dotted], frame: Frame) -> bool:
    """`dotted` resolves through a `partial(...)` alias: its calls hold arguments the call does
    not show, so a fix that rewrites the call must not apply."""
    for _ in range(5):
        if not dotted:
            return False
        for scope in visible_scopes(frame):
            if dotted[0] in scope.imports:
                return False
            if dotted[0] in scope.bindings:
                value = scope.aliases.get(dotted[0])
                if value is None:
                    return False
                if isinstance(value, cst.Call):  # `partial(f, kw=...)`, or a call of another kind
                    if resolve(dotted_name(value.func), scope, 0) == "functools.partial":
                        return True
                    return _alias_target(value, scope, 1) is not None  # another file's return
                                                                      # (it may be a partial)
                dotted, frame = dotted_name(value), scope
                break
        else:
            return False
    return False


def alternatives(dotted: Optional[Dotted], frame: Frame) -> List[str]:
    """What else `dotted` may refer to in `frame`: the qualified names of the other imports of
    its root in the scope that binds it (a fallback in an `except`, another backend's import
    under an `if`). Empty when the root is bound once, or not by an import."""
    if not dotted:
        return []
    root, rest = dotted[0], dotted[1:]
    for scope in visible_scopes(frame):
        if root in scope.imports:
            out = []
            for target in scope.alternatives.get(root, ()):
                full = ".".join((target,) + rest)
                out.append(_CANONICAL.get(full, full))
            return out
        if root in scope.bindings:
            return []
    return []


def relative_ref(dotted: Optional[Dotted], frame: Frame) -> Optional[str]:
    """What `dotted` names through a relative import of the file, as the import writes it
    (`from .utils import sample` -> `.utils.sample` for `sample`), the way the project pass keys
    the facts it finds in another file; None for any other name, or one the scope binds too."""
    if not dotted:
        return None
    root = dotted[0]
    for scope in visible_scopes(frame):
        if root in scope.imports or root in scope.bindings:
            return None
        if root in scope.relative:
            target = scope.relative[root]
            return ".".join((target,) + tuple(dotted[1:])) if target is not None else None
    return None


def resolve_expr(expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
    return resolve(dotted_name(expr), frame)


def torch_alias(frame: Frame) -> Optional[str]:
    """The name under which `torch` itself is usable in `frame` (None: it must be imported)."""
    shadowed = set()
    for scope in visible_scopes(frame):
        for name, target in scope.imports.items():
            if target == "torch" and name not in shadowed:
                return name
        shadowed |= scope.bindings
        shadowed |= set(scope.imports)
    return None


def torch_name_free(frame: Frame) -> bool:
    """True when `import torch` can be added: no scope up to the module binds `torch` otherwise."""
    scope: Optional[Frame] = frame.scope
    while scope is not None:
        if "torch" in scope.bindings or scope.imports.get("torch", "torch") != "torch":
            return False
        scope = scope.parent
    return True


def bound_locally(name: str, frame: Frame) -> bool:
    """`name` is a variable, parameter, def or class where `frame` sees it, not a module-level
    import (which the project pass resolves; relative imports are bound in no scope of the file)."""
    for scope in visible_scopes(frame):
        if name in scope.imports:
            return False
        if name in scope.bindings:
            return True
    return False


def uncast(expr: cst.BaseExpression, frame: Frame) -> cst.BaseExpression:
    """`typing.cast(T, value)` -> `value` (it returns its second argument unchanged); any other
    expression as it is."""
    if (
        isinstance(expr, cst.Call) and len(expr.args) == 2
        and all(a.keyword is None and not a.star for a in expr.args)
        and resolve_expr(expr.func, frame) == "typing.cast"
    ):
        return expr.args[1].value
    return expr
