"""The scaler protocol of callees in other files, as the project pass delivers it to one file's
lint (amplint.analysis.project.scaler_resolution makes these entries).

`EntryScaler` names one call of this file (the calling function's key, the call's dotted text
and its ordinal among the calls of that text in that function, in the order `tree.calls`
lists them) and carries the callee's composed protocol as plain data: per event its kind,
scaler / optimizer text as the callee writes them, the loops and branches around it (numbered
within the callee), and where it is (`utils.py:18`). The composing walker
(amplint.analysis.facts.scaler_protocol) consults it where the file's own call graph has no
callee, renames the callee's parameters to the call's arguments as for a same-file callee, and
emits the events at the call. Their loops and branches become nodes of their own: an `if` of
the callee is rebuilt from its test's text (the rules read the test), other branches and
loops are opaque tokens that only compare by identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.scaler_flow import Branch, Loop
from amplint.analysis.facts.syntax import calls_in
from amplint.analysis.facts.tree import dotted_name

# (kind, scaler text or "", optimizer/arg text or "", backward, framework or "", ctx, line, text)
# ctx: ("L", n) for a loop, ("L", n, True) for one whose iterations each step another optimizer
# (scaler_paths.optimizer_loops), ("L", n, each, target, parameter) for one that runs once when a
# call passes the parameter (loop_bindings.single_pass), ("B", n, index, cond or "", positive, if-test text or "")
RemoteEvent = Tuple[str, str, str, bool, str, tuple, int, str]


@dataclass(frozen=True)
class EntryScaler:
    function: str  # the calling function's key in this file ("Trainer.fit", "main", MODULE_KEY)
    call: str  # the call's dotted text ("self.clip_gradients", "unscale_and_clip")
    ordinal: int  # among the calls of that text in that function
    callee: str  # "utils.py: unscale_and_clip", for messages and --show-regions
    positional: Tuple[str, ...]  # the callee's positional parameters, `self` dropped
    keywords: Tuple[str, ...]  # its keyword-only parameters
    events: Tuple[RemoteEvent, ...]
    none_defaults: Tuple[str, ...] = ()  # its parameters whose default is `None`
    # a closure's (`self.step()` of `self.step = make_step(opt, scaler)`): the factory's
    # positional and keyword-only parameters and those it never binds again, which the
    # closure's free names stand for as the factory call passed them
    factory: Tuple[Tuple[str, ...], ...] = ()
    # a method called on an instance (`optimizer.step_and_update_lr()`): its `self` is the
    # object the call names
    method: bool = False
    source: str = ""  # the callee's file as the project names it (`callee` shows it to the user)
    # (the numbers of its own `if`s testing a bare parameter it never binds again, (parameter,
    # truth of its literal default) pairs): the arms a literal argument or default decides
    flags: tuple = ()
    # a method's: the attributes its class's constructor stores of its parameters
    # (project/scaler_stored.py), (attribute, parameter, position or -1, default `None`)
    stored: tuple = ()


@dataclass(frozen=True)
class Remote:
    """Where a composed event of another file is: `utils.py:18`, and its call's text; its file
    as the project names it and its line (the finding at the call is the same hazard as one the
    callee's file reports there: Diagnostic.through)."""

    where: str
    text: str
    path: str = ""
    line: int = 0

    @property
    def place(self):
        """(path, line) for Diagnostic.through; None when the file is not known."""
        return (self.path, self.line) if self.path else None


@dataclass(frozen=True)
class EntryCallerUpdate:
    """A class of this file whose method a subclass (or a class mixing it in) in another file
    calls through `self.`, where the callee steps `scaler` (`self.scaler`) and a method of the
    calling class updates it: the update is the caller's, as it would be were both classes in
    one file (ScalerAnalysis.updated_anywhere), and the caller's file checks the order of the
    step composed at its call and its update."""

    cls: str  # the callee's class key here ("GANStepMixin")
    scaler: str  # the scaler's text in the callee ("self.scaler")
    caller: str  # "models/realesrgan_model.py: RealESRGANModel", for --show-regions and tests


def caller_updates(entries) -> Dict[str, FrozenSet[str]]:
    """class key -> the scalers callers in other files update (EntryCallerUpdate)."""
    found: Dict[str, Set[str]] = {}
    for entry in entries or ():
        if isinstance(entry, EntryCallerUpdate):
            found.setdefault(entry.cls, set()).add(entry.scaler)
    return {cls: frozenset(scalers) for cls, scalers in found.items()}


def caller_updated(updates: Dict[str, FrozenSet[str]], frame, text: str) -> bool:
    """`frame` is a method of a class whose `self.` scaler `text` callers update (`updates`,
    caller_updates)."""
    if not updates or not text.startswith("self."):
        return False
    cls = frame.class_frame
    key = function_key(cls) if cls is not None else None
    return key is not None and text in updates.get(key, ())


# The key of a module's top-level statements, read like one more function (a script's
# training loop at module level, as in llama2.c's train.py); no function can be named so
MODULE_KEY = "<module>"


def scaler_entries(entries) -> Dict[Tuple[str, str, int], EntryScaler]:
    return {
        (e.function, e.call, e.ordinal): e for e in entries if isinstance(e, EntryScaler)
    }


def remote_entry(analysis, call: cst.Call) -> Optional[EntryScaler]:
    """The project pass's summary of the other file's function `call` runs, or None
    (`analysis`: the file's ScalerAnalysis, whose `remote` holds the entries by key)."""
    if not analysis.remote:
        return None
    keys = analysis.__dict__.get("_call_keys")
    if keys is None:
        keys = analysis.__dict__["_call_keys"] = call_keys(analysis.tree)
    key = keys.get(id(call))
    return analysis.remote.get(key) if key is not None else None


def inherited_scalers(remote: Dict[Tuple[str, str, int], EntryScaler], tree) -> List[Tuple[str, object]]:
    """(text, function frame) of the `self.` scalers the methods of another file called through
    `self.` use as a GradScaler (`unscale_`, `scale(...).backward()`, or a `...scaler` that is
    scaled, stepped or updated): speechbrain's `ASR(Brain)` calls `self.optimizers_step()`, whose
    `self.scaler` Brain makes. They are scalers of the calling class as much as its own uses
    would make them (ScalerAnalysis.infos). Through a method of the object an attribute holds
    (`self.mp_trainer.optimize(opt)`, a method entry), the callee's `self.scaler` is the caller's
    `self.mp_trainer.scaler`; through a method of the object a local or parameter holds
    (`loss_scaler.backward(loss)` of VideoMAE's engine, scaler_wrappers.held_wrapper), the
    callee's `self._scaler` is the caller's `loss_scaler._scaler`."""
    frames = None
    found: List[Tuple[str, object]] = []
    for entry in remote.values():
        if not entry.call.startswith("self."):
            # `x.m()` (a method entry) on the one project class a local or parameter `x` holds
            prefix = entry.call.split(".", 1)[0] if entry.method and entry.call.count(".") == 1 else None
        else:
            # `self.m()` runs on this object; `self.a.m()` (a method entry) on the one `self.a` holds
            prefix = "self" if entry.call.count(".") == 1 else (
                entry.call.rsplit(".", 1)[0] if entry.method and entry.call.count(".") == 2 else None)
        if prefix is None:
            continue
        for kind, scaler, _arg, backward, *_rest in entry.events:
            if not scaler.startswith("self.") or not (
                    kind == "unscale" or (kind == "scale" and backward)
                    or ("scaler" in scaler.rsplit(".", 1)[-1].lower()
                        and kind in ("scale", "step", "update"))):
                continue
            if frames is None:
                frames = {function_key(f): f for f in tree.frames if f.kind == "function"}
            frame = frames.get(entry.function)
            if frame is not None:
                found.append((prefix + scaler[len("self"):], frame))
    return found


def call_keys(tree) -> Dict[int, Tuple[str, str, int]]:
    """id(call node) -> (function key, dotted text, ordinal) for the calls inside functions
    and at module level (MODULE_KEY), the key the project pass gives an EntryScaler."""
    found: Dict[int, Tuple[str, str, int]] = {}
    counts: Dict[Tuple[str, str], int] = {}
    keys: Dict[int, Optional[str]] = {}
    for site in tree.calls:
        function = site.frame.function
        if site.dotted is None:
            continue
        if function is None:
            key: Optional[str] = MODULE_KEY if _at_module_level(site.frame) else None
        else:
            if id(function) not in keys:
                keys[id(function)] = function_key(function)
            key = keys[id(function)]
        if key is None:
            continue
        text = ".".join(site.dotted)
        ordinal = counts.get((key, text), 0)
        counts[(key, text)] = ordinal + 1
        found[id(site.node)] = (key, text, ordinal)
    return found


def _at_module_level(frame) -> bool:
    """The module's own statements (not a class body, a lambda or a comprehension's scope)."""
    scope = frame.scope
    return scope is not None and scope.kind == "module"


def function_key(frame) -> Optional[str]:
    """`Class.method`, `outer.inner`, `train` (the project summary's function keys)."""
    parts: List[str] = []
    current = frame
    while current is not None and current.kind != "module":
        if current.kind in ("function", "class"):
            parts.append(current.name)
        current = current.parent
    return ".".join(reversed(parts)) if parts else None


# the token of a callee's loop whose iterations each step another optimizer (scaler_paths)
OPTIMIZER_LOOP = "remote_optimizer_loop"


def remote_ctx(ctx: tuple, tokens: Dict[int, object]) -> tuple:
    """The callee's loops and branches as Loop/Branch values of this file's walk; `tokens`
    (one dict per composed call) keeps one node per callee loop/branch statement."""
    out = []
    for item in ctx:
        number = item[1]
        if item[0] == "L":
            node = tokens.setdefault(number, cst.Name(
                OPTIMIZER_LOOP if len(item) > 2 and item[2] else "remote_loop"))
            out.append(Loop(node, tuple(item[3:5]) if len(item) > 4 else None))
            continue
        _, _, index, cond, positive, test = item
        node = tokens.get(number)
        if node is None:
            node = _if_node(test) if test else cst.Name("remote_branch")
            tokens[number] = node
        out.append(Branch(node, index, cond or None, positive))
    return tuple(out)


def _if_node(test: str) -> cst.CSTNode:
    try:
        expr = cst.parse_expression(test)
    except cst.ParserSyntaxError:
        return cst.Name("remote_branch")
    return cst.If(test=expr, body=cst.IndentedBlock(body=[]))


def lambda_updates(tree) -> Set[str]:
    """The receivers' texts of the `X.update()` calls in the file's lambda bodies
    (`trainer.add_event_handler(event, lambda engine: scaler.update())`): such an update runs
    whenever what the lambda is handed to calls it, an order no flow of the file shows."""
    found: Set[str] = set()
    for node, _frame in tree.lambdas:
        for call in calls_in(node.body):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "update" and not call.args:
                receiver = dotted_name(func.value)
                if receiver:
                    found.add(".".join(receiver))
    return found
