"""The flag a GradScaler is enabled by, as a value of the program (issue 26): `GradScaler(
enabled=args.amp)` is on exactly when the `amp` attribute of that `args` object is true.

Two flags on one object are two values: a scaler enabled by `args.amp` is not off in the arm
of `if args.fp16: scaler.scale(loss).backward() else: loss.backward()` that runs when
`args.fp16` is false (transformers' legacy run_glue.py kept an apex-era `--fp16` beside a
native `--amp`). The same flag in two files is one value when the object reaches the other
file as a parameter: `train(args, ..., scaler)` in run_glue.py hands engine.py's `train` a
scaler enabled by its own parameter's `args.amp`. The project pass delivers that as an
`EntryScalerFlag` to the callee's file (amplint.analysis.project.scaler_resolution).

A flag is only ever `name.attr` of a plain name (not `self`/`cls`), bound once in its scope
(a parameter, or one assignment), with no store to the attributes compared anywhere the
project pass or the file can see (`args.amp = args.fp16` links the two; `setattr(args, ...)`,
`vars(args).update(...)` and `args.__dict__[k] = v` leave every attribute unknown). Anything else is no flag:
the rules keep the silence they had.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.names import binding_scope
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.scaler_remote import function_key

_ROOTS_NEVER = ("self", "cls")


@dataclass(frozen=True)
class EntryScalerFlag:
    """A call in another file passes this file's function `function` a scaler (its parameter
    `param`) created with `enabled=<root>.<attr>`, where `<root>` is the object that call
    passes as this function's parameter `root`."""

    function: str  # the callee's key in this file ("train", "Trainer.fit")
    param: str  # the scaler parameter
    root: str  # the parameter holding the flag's object
    attr: str  # the flag's attribute
    cite: str  # the call, "run_glue.py:48"
    stored: Tuple[str, ...]  # attributes stored on that object's names in the project ("*": any)


@dataclass(frozen=True)
class Flag:
    root: str  # the name, as the function that tests it writes it
    attr: str
    scope: int  # id of the frame that binds the name
    cite: Optional[str]  # where the scaler comes from, for another file's call
    stored: Tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.root}.{self.attr}"


def enabled_flag(analysis, info) -> Optional[Tuple[str, str, object]]:
    """(root, attr, frame of the first construction) when every construction of this scaler
    is `GradScaler(..., enabled=<root>.<attr>)` with one and the same flag, in one scope."""
    if info is None or info.maybe_none or not info.constructions or info.enabled is not Enabled.MAYBE:
        return None
    found = set()
    frames = set()
    frame = None
    for call in info.constructions:
        site = analysis.sites.get(id(call))
        expr = analysis.enabled_arg(call)
        if site is None or expr is None:
            return None
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)):
            return None
        if expr.value.value in _ROOTS_NEVER:
            return None
        found.add((expr.value.value, expr.attr.value))
        frames.add(id(site.frame.scope))
        frame = frame or site.frame.scope
    if len(found) != 1 or len(frames) != 1:
        return None
    root, attr = found.pop()
    return root, attr, frame


def bound_once(tree, scope, name: str) -> bool:
    """`name` is bound exactly once in `scope`: a parameter, or one plain assignment (a loop
    target, `with ... as`, an import or a second assignment: no single value)."""
    count = 0
    node = scope.node
    if scope.kind == "function":
        params = node.params
        every = (*params.posonly_params, *params.params, *params.kwonly_params)
        count += sum(1 for p in every if p.name.value == name)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param) and star.name.value == name:
                return False
    elif name not in scope.bindings:
        return False
    for assign in tree.assigns:
        if assign.frame.scope is not scope or assign.value is None:
            continue
        for target in assign.targets:
            if isinstance(target, cst.Name) and target.value == name:
                count += 1
            elif isinstance(target, (cst.Tuple, cst.List, cst.StarredElement)) and _binds(target, name):
                return False  # unpacked: not one value we can name
    if name in scope.imports or name in getattr(tree, "walrus_names", ()):
        return False
    return count == 1


def _binds(target, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return False


def stored_attrs(tree, name: str) -> Tuple[str, ...]:
    """The attributes of `name` this file stores (`name.attr = ...`, `name.attr += ...`)."""
    found = set()
    for assign in tree.assigns:
        for target in assign.targets:
            if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == name):
                found.add(target.attr.value)
    return tuple(sorted(found))


# a store by name: `setattr(args, k, v)`, `vars(args).update(cfg)`, `args.__dict__[k] = v`
# (reading `vars(args)` to log it stores nothing)
_ANY_STORE = (r"setattr\(\s*{n}\b"
              r"|(?:vars\(\s*{n}\s*\)|(?<![\w.]){n}\.__dict__)\s*(?:\.\s*(?:update|setdefault)\b|\[[^\]\n]*\]\s*=(?!=))")


def stored_in_texts(texts: Iterable[str], names: Iterable[str]) -> Tuple[str, ...]:
    """The attributes these texts store on ANY object (`args.amp = ...`, `opts.fp16 = opts.fp16
    or opts.amp` through another name for the same object, `x.amp += ...`, `x.amp, y = ...`) or
    define as a function or property (`def fp16(self): return self.amp`); "*" when one is set by
    name on an object other than `self`/`cls` (`setattr(args, ...)`, `vars(args).update(...)`,
    `args.__dict__[k] = v`). The object is not told apart by its spelling: an alias of `args`
    (a parameter of a helper it is passed to) stores on the same object. A text test: it may
    find more than the code stores, never less of what is written this way. `names`: the
    spellings the caller asks about (kept for callers; every object counts)."""
    del names
    found = set()
    for text in texts:
        if _ANY_STORE_ANYWHERE.search(text):
            return ("*",)
        for match in _STORE_ANYWHERE.finditer(text):
            found.add(match.group(1) or match.group(2) or match.group(3))
    return tuple(sorted(found))


_STORE_ANYWHERE = re.compile(
    r"[\w)\]]\s*\.\s*(\w+)\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"
    r"|[\w)\]]\s*\.\s*(\w+)\s*(?=,[^\n=]*=(?!=))"
    r"|\bdef\s+(\w+)\s*\(")
_ANY_STORE_ANYWHERE = re.compile(
    r"setattr\(\s*(?!(?:self|cls)\s*,)[\w.]+\s*,"
    r"|(?:vars\(\s*(?!self\s*\))[\w.]+\s*\)|(?<![\w.])(?!self\.)\w+\.__dict__)"
    r"\s*(?:\.\s*(?:update|setdefault)\b|\[[^\]\n]*\]\s*=(?!=))")


def flag_entries(entries) -> Dict[Tuple[str, str], Tuple[EntryScalerFlag, ...]]:
    found: Dict[Tuple[str, str], Tuple[EntryScalerFlag, ...]] = {}
    for entry in entries or ():
        if isinstance(entry, EntryScalerFlag):
            key = (entry.function, entry.param)
            found[key] = found.get(key, ()) + (entry,)
    return found


def branch_flag(test: cst.BaseExpression) -> Optional[Tuple[str, str]]:
    """(root, attr) of an `if` test that is one flag: `args.fp16`, `not args.fp16`."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name):
        if test.value.value not in _ROOTS_NEVER:
            return test.value.value, test.attr.value
    return None


def scaler_flag(analysis, ref) -> Optional[Flag]:
    """The flag the scaler `ref` of this file is enabled by: its own constructions' `enabled=`,
    or, for a parameter, what every call of another file the project pass saw passes it."""
    info = analysis.info(ref)
    if info is None or info.maybe_none:
        return None
    tree = analysis.tree
    if info.constructions:
        found = enabled_flag(analysis, info)
        if found is None:
            return None
        root, attr, frame = found
        scope = binding_scope(frame, root)
        if scope is None or not bound_once(tree, scope, root):
            return None
        return Flag(root, attr, id(scope), None)
    frame = next((f for f in tree.frames if id(f) == ref.scope and f.kind == "function"), None)
    if frame is None or "." in str(ref):
        return None
    entries = analysis.flag_entries.get((function_key(frame) or "", str(ref)), ())
    flags = {(e.root, e.attr) for e in entries}
    if len(flags) != 1:
        return None
    root, attr = flags.pop()
    if binding_scope(frame, root) is not frame or not bound_once(tree, frame, root):
        return None
    stored = tuple(sorted({a for e in entries for a in e.stored}))
    return Flag(root, attr, id(frame), entries[0].cite, stored)


def other_flag(analysis, flag: Flag, test: cst.BaseExpression, frame) -> Optional[str]:
    """The text of `test` when it is a flag of the same object as `flag` but another
    attribute, neither attribute stored anywhere seen: the two are independent values, so
    the arm that runs when `test` says "no AMP" can run with the scaler enabled."""
    tested = branch_flag(test)
    if tested is None or tested[1] == flag.attr:
        return None
    scope = binding_scope(frame, tested[0])
    if scope is None or id(scope) != flag.scope:
        return None
    if flag.root != tested[0]:
        return None
    stored = set(flag.stored) | set(stored_attrs(analysis.tree, tested[0]))
    stored |= set(stored_in_texts([analysis.module.code], [tested[0]]))
    if stored & {"*", flag.attr, tested[1]}:
        return None
    return f"{tested[0]}.{tested[1]}"
