"""Which functions of a file may hold GradScaler protocol events, told from Python's `ast`.

The project pass composes a caller's call into another file's function with the callee's
protocol summary (scaler_summaries.py), which LibCST makes for the whole callee file. Most such
callees are helpers (`is_sagemaker_mp_enabled()`, `get_scheduler(...)` of transformers'
Trainer) whose file holds a callee word somewhere but whose function has no event: the summary
gives it none, and no entry. `protocol_keys(text)` gives a superset of the function keys that
`summarize_scaler(...).functions` can hold, for about a tenth of LibCST's parse: a callee file
none of whose asked-for functions is in it is not summarised (its summary could give no entry).

A function's composed flow (scaler_protocol.function_flows, made without project entries) holds
a protocol event only from a call in its body that the flow walker (scaler_flow.FlowWalker)
turns into one, or from a call the file's call graph resolves to a function of the file whose
flow holds one. So a function is kept when a call in its body (lambdas, nested defs and class
bodies included: more than the walker reads) is one of:
- a method call `X.m(...)` of a scaler (`scale`, `unscale_`, `step`, `update`, a scaled
  `backward`), when the file may have a scaler at all (ScalerAnalysis.infos: a name or text
  with "caler" in any case, or a call `.unscale_(...)` / `.scale(...)`);
- an optimizer's `X.step()` without arguments; a tensor's `X.backward()` without positional
  arguments; `torch.autograd.backward` and `y.backward(gradient)` (with a positional argument
  only when the text says "autograd" or "_like(": the name resolves through an import, the
  receiver is a tensor by `autograd.grad` or `torch.*_like`, facts/gradient_backward.py);
- a clipping call (`CLIP_NAMES` as the call's last name, or a name imported as one);
- a framework verb with an unscale event (scaler_vocab), when its framework may be imported;
- a call whose last name is the name of a function kept (the call graph resolves a call to a
  function of the same name only: a plain function, a method through `self`, a base class or
  an instance's class), until nothing is added.
An instance call (`model(x)`, `Net()(x)`) reaches `forward`/`__call__` whatever its name: when
one of those is kept, every function may be (None). None too when `ast` cannot parse the text.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from amplint.analysis.data.scaler_vocab import VERBS
from amplint.analysis.facts.scalers import CLIP_NAMES
from amplint.analysis.parsing import python_tree
from amplint.analysis.project.code_blanking import blank_code
from amplint.analysis.project.text_tests import starts_a_word

_SCALER_METHODS = frozenset({"scale", "unscale_", "step", "update", "backward"})
_RISKY_TARGETS = frozenset(CLIP_NAMES) | {"backward"}
_INSTANCE_CALLS = ("forward", "__call__")
_UNSCALE_EVENTS = {"unscale", "unscale_all"}  # framework_verbs: the kinds giving a protocol event


# every call name that can keep a function without a scaler (`hit` below: clip names, the
# verbs, `step`, `backward`, the imported risky targets), and those of `scaler_calls`
_SEED_NAMES = (frozenset(CLIP_NAMES) | {"step", "backward", "scale", "unscale_"} | _RISKY_TARGETS
               | {verb.method for verb in VERBS if _UNSCALE_EVENTS & set(verb.events)})
# one of them as a whole name (a call names its function by a whole identifier): `(?<!\w)` is
# tested on each match (`_names_a_seed`), not led by (a pattern led by a lookbehind is tried at
# every position; one led by the names skips to their first letters)
_SEED_AHEAD = re.compile(r"(?:%s)(?!\w)" % "|".join(sorted(map(re.escape, _SEED_NAMES))))


def _names_a_seed(text: str) -> bool:
    """`re.search(r"(?<!\\w)(?:<seed names>)(?!\\w)", text)`: a match the lookbehind drops ends
    before any match it keeps could start (inside a name each character follows a word one)."""
    for match in _SEED_AHEAD.finditer(text):
        if starts_a_word(text, match.start()):
            return True
    return False
_CALER = re.compile("caler", re.IGNORECASE)  # `"caler" in text.lower()`, without the copy


def _no_event_call(text: str) -> bool:
    """Whether no call of the text can keep a function: its code (comments removed, plain
    strings emptied: code_blanking) names none of `_SEED_NAMES`, and no text speaks of a scaler
    ("caler", which lets `update` keep one). `protocol_keys` of such a text is empty, told
    without parsing it (a callee word only in a docstring: "backward compatible")."""
    if _CALER.search(text):
        return False
    if _names_a_seed(text):
        code, sure = blank_code(text)
        return sure and not _names_a_seed(code)
    return True


def protocol_keys(text: str) -> Optional[FrozenSet[str]]:
    """The keys (`f`, `C.m`, `f.inner`) of the functions whose protocol summary may hold
    events; None: any function may (or `ast` cannot tell). A text with no call that can keep
    one (`_no_event_call`) is not parsed: no keys (its LibCST summary has no event either)."""
    if _no_event_call(text):
        return frozenset()
    try:
        tree = python_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    defs, calls, imported, scaler_calls = _collect(tree)
    scalers = scaler_calls or "caler" in text.lower()
    autograd = "autograd" in text or "_like(" in text  # facts/gradient_backward.py's evidence
    verbs = {verb.method for verb in VERBS
             if _UNSCALE_EVENTS & set(verb.events) and (verb.distinctive or verb.module in text)}
    risky = {name for name, target in imported if target.rsplit(".", 1)[-1] in _RISKY_TARGETS}
    kept: Set[int] = set()
    called: List[Set[str]] = [set() for _ in defs]
    for owner, name, is_attr, positional, any_args in calls:
        called[owner].add(name)
        if owner in kept:
            continue
        if is_attr:
            hit = (name in CLIP_NAMES or name in verbs or (scalers and name in _SCALER_METHODS)
                   or (name == "step" and not any_args)
                   or (name == "backward" and (positional == 0 or autograd)))
        else:
            hit = name in CLIP_NAMES or name == "backward" or name in risky
        if hit:
            kept.add(owner)
    names = {defs[i][1] for i in kept}
    while True:
        more = {i for i in range(len(defs)) if i not in kept and called[i] & names}
        if not more:
            break
        kept |= more
        names |= {defs[i][1] for i in more}
    if names & set(_INSTANCE_CALLS):
        return None
    return frozenset(defs[i][0] for i in kept)


def _collect(tree: ast.Module):
    """(defs: [(key, name)], calls: [(def index, last name, attribute?, positional count,
    any argument?)] of the calls whose innermost enclosing def is that one, imports:
    [(bound name, qualified target)], whether some call is `.scale(...)`/`.unscale_(...)`).
    The orders are the walk's (no reader depends on them). A body is walked as a scope of its
    own (its owner and key prefix held once, not with each node), and a `Name` or `Constant`,
    which holds no call or def, is never stacked."""
    defs: List[Tuple[str, str]] = []
    calls: List[Tuple[int, str, bool, int, bool]] = []
    imported: List[Tuple[str, str]] = []
    scaler_calls = False
    fields = _FIELDS
    leaves = _LEAVES
    node_type = ast.AST
    attribute = ast.Attribute
    defining = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    # (nodes, index of their innermost enclosing def or -1, key prefix)
    scopes: List[Tuple[list, int, str]] = [([tree], -1, "")]
    while scopes:
        nodes, owner, prefix = scopes.pop()
        stack = [node for node in nodes if type(node) not in leaves]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            kind = type(node)
            if kind is attribute:  # the commonest node: its one field that may hold a call
                value = node.value  # type: ignore[attr-defined]
                if type(value) not in leaves:
                    push(value)
                continue
            names = fields.get(kind)
            if names is None:
                names = fields[kind] = tuple(f for f in kind._fields if f not in _NOT_NODES)
            if kind in defining:
                key = prefix + node.name  # type: ignore[attr-defined]
                inner = owner
                if kind is not ast.ClassDef:
                    inner = len(defs)
                    defs.append((key, node.name))  # type: ignore[attr-defined]
                for field in names:
                    value = getattr(node, field, None)
                    if field == "body":
                        scopes.append((value, inner, key + "."))
                    elif type(value) is list:
                        for child in value:
                            if type(child) not in leaves and isinstance(child, node_type):
                                push(child)
                    elif type(value) not in leaves and isinstance(value, node_type):
                        push(value)
                continue
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                is_attr = type(func) is ast.Attribute
                name = func.attr if is_attr else func.id if type(func) is ast.Name else None
                if name is not None:
                    if is_attr and (name == "scale" or name == "unscale_"):
                        scaler_calls = True
                    if owner >= 0:
                        args = node.args  # type: ignore[attr-defined]
                        positional = sum(1 for a in args if type(a) is not ast.Starred)
                        calls.append((owner, name, is_attr, positional,
                                      bool(args or node.keywords)))  # type: ignore[attr-defined]
            elif kind is ast.Import:
                for alias in node.names:  # type: ignore[attr-defined]
                    imported.append((alias.asname or alias.name.split(".", 1)[0],
                                     alias.name if alias.asname else alias.name.split(".", 1)[0]))
            elif kind is ast.ImportFrom:
                for alias in node.names:  # type: ignore[attr-defined]
                    imported.append((alias.asname or alias.name, f"{node.module or ''}.{alias.name}"))
            for field in names:
                value = getattr(node, field, None)
                if type(value) is list:
                    for child in value:
                        if type(child) not in leaves and isinstance(child, node_type):
                            push(child)
                elif type(value) not in leaves and isinstance(value, node_type):
                    push(value)
    return defs, calls, imported, scaler_calls


# nodes that never hold a call or a def
_LEAVES = frozenset({ast.Name, ast.Constant})

# fields that never hold a node with a call or a def below it
_NOT_NODES = frozenset({"ctx", "op", "type_comment", "name", "asname", "module", "id", "attr",
                        "arg", "level", "is_async", "conversion", "kind", "lineno", "col_offset",
                        "end_lineno", "end_col_offset"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def quiet_files(wanted: Dict[str, Set[str]], keys_of) -> Set[str]:
    """The files of `wanted` (path -> function keys asked of it; a key ending in "." asks for
    any function nested in that one) none of whose asked-for functions may hold protocol events
    (`keys_of(paths)`: path -> `protocol_keys` of its text)."""
    found = keys_of(sorted(wanted))
    return {path for path, keys in wanted.items()
            if found.get(path) is not None and not keys & found[path]
            and not any(k.endswith(".") and any(f.startswith(k) for f in found[path]) for k in keys)}
