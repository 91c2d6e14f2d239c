"""A parameter's default is its value where every call of the function in the file leaves it
out (issue 26: allennlp's `def masked_max(vector, mask, dim, min_val=-1e7)` called as
`masked_max(x, mask, dim=2)`).

Never guessed: the function must be a plain def (no decorator) bound once in a module or
function body, named in the file only as the callee of direct calls (not passed on, not stored),
called at least once, and no call may pass the parameter (by position or keyword) or use
`*args`/`**kwargs`; the parameter must be bound once (nothing in the body rebinds it). A function
other files call under a region (project entries name it) counts those calls too, by the
arguments the project pass saw at each of them (EntryRegion.args: allennlp's `util.masked_max(
activations, mask, dim=2)` in cnn_encoder.py); unknown when one of them is not a plain call
(a call through a value, a framework's), whose arguments no file shows.

`attr_default`: the same for a constructor's parameter the class keeps on `self` (openfold's
`Attention.__init__(self, c, inf=1e9)` storing `self.inf = inf`, read as `-self.inf` in
`forward`): the value of `self.inf` where `__init__` binds it exactly once, from a parameter it
never rebinds, no other store of `.inf` (any receiver, augmented too) or `setattr` is in the
file nor in another project file (foreign_stores.py), and every construction `Attention(...)`
of the file (at least one; the class named nowhere else: not subclassed, aliased nor passed
on) leaves the parameter out. Instances other
files build are not seen, so a class whose methods another file reaches (a project entry names
it) is left unknown.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.foreign_stores import stored_elsewhere
from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.facts.tree import Frame, scope_key, self_attr


class ParamDefaults:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._names: Optional[Counter] = None  # Name value -> occurrences in the file
        self._calls: Optional[Dict[str, list]] = None  # function name -> calls `name(...)`
        self._stored: Optional[Counter] = None  # attribute name -> stores `x.attr = ...` / `+=`
        self._augmented: Counter = Counter()
        self._nones: Counter = Counter()  # attribute name -> stores of the literal `None`

    def default(self, name: str, frame: Frame) -> Optional[cst.BaseExpression]:
        """The default of parameter `name` of the function `frame` is in, when that is the
        value it has in every call of the file; None when unknown."""
        function = frame.scope
        if function.kind != "function" or not isinstance(function.node, cst.FunctionDef):
            return None
        node: cst.FunctionDef = function.node
        parent = function.parent
        tree = self.facts.tree
        if node.decorators or parent is None or parent.kind not in ("module", "function"):
            return None
        if not tree.bound_once(function, name) or not tree.bound_once(parent.scope, node.name.value):
            return None
        shapes: List[Tuple[int, Tuple[str, ...]]] = []  # the arguments of the calls of other files
        if self.facts.entries:
            key = scope_key(function)
            for entry in self.facts.entries:
                if getattr(entry, "target", None) != key:
                    continue
                if not isinstance(entry, EntryRegion) or entry.args is None:
                    return None
                shapes.extend(entry.args)
        params = node.params
        positional = list(params.posonly_params) + list(params.params)
        position = next((i for i, p in enumerate(positional) if p.name.value == name), None)
        param = (
            positional[position] if position is not None
            else next((p for p in params.kwonly_params if p.name.value == name), None)
        )
        if param is None or param.default is None:
            return None
        calls = self._calls_of(node.name.value)
        # every mention of the function's name is the def or the callee of one of these calls
        if not (calls or shapes) or self._mentions(node.name.value) != len(calls) + 1:
            return None
        for call in calls:
            if any(arg.star for arg in call.args):
                return None
            shapes.append((
                sum(arg.keyword is None for arg in call.args),
                tuple(arg.keyword.value for arg in call.args if arg.keyword is not None),
            ))
        keyword_ok = position is None or position >= len(params.posonly_params)
        for positional_count, keywords in shapes:
            if position is not None and positional_count > position:
                return None
            if keyword_ok and name in keywords:
                return None
        return param.default

    def attr_default(self, expr: cst.BaseExpression,
                     frame: Frame) -> Optional[Tuple[cst.BaseExpression, Frame]]:
        """(the default, the frame it is evaluated in) when `expr` is `self.<attr>` in a method
        of a class whose `__init__` stores a parameter's value there that every construction of
        the file leaves to its default; None when unknown."""
        attr = self_attr(expr)
        cls = frame.class_frame
        if attr is None or cls is None or frame.scope.parent is not cls:
            return None
        facts = self.facts
        tree = facts.tree
        init = cls.functions.get("__init__")
        module = tree.module_frame
        if init is None or cls.parent is not module or not tree.bound_once(module, cls.name):
            return None
        sites = facts.index.self_assigns(cls).get(attr, [])
        if len(sites) != 1 or sites[0].frame is not init or len(sites[0].targets) != 1:
            return None
        value = sites[0].value
        if not isinstance(value, cst.Name) or self.attribute_stores(attr) != 1:
            return None
        key = scope_key(init).split(".")[0]
        if any(getattr(e, "target", None) == key or str(getattr(e, "target", "")).startswith(key + ".")
               or str(getattr(e, "scope", "")).startswith(key + ".") for e in facts.entries or ()):
            return None  # another file reaches its methods: instances built there are not seen
        if self._mentions(cls.name) != len(self._calls_of(cls.name)) + 1:
            return None
        default = self._left_out(init, value.value, self._calls_of(cls.name), skip_self=True)
        return (default, cls) if default is not None else None

    def _left_out(self, function: Frame, name: str, calls: list,
                  skip_self: bool) -> Optional[cst.BaseExpression]:
        """The default of parameter `name` of `function` when each of `calls` (at least one)
        leaves it out and the body never rebinds it."""
        node = function.node
        if not isinstance(node, cst.FunctionDef) or node.decorators or not calls:
            return None
        if not self.facts.tree.bound_once(function, name):
            return None
        params = node.params
        positional = list(params.posonly_params) + list(params.params)
        position = next((i for i, p in enumerate(positional) if p.name.value == name), None)
        param = (positional[position] if position is not None
                 else next((p for p in params.kwonly_params if p.name.value == name), None))
        if param is None or param.default is None:
            return None
        offset = 1 if skip_self else 0
        for call in calls:
            if any(arg.star for arg in call.args):
                return None
            count = sum(arg.keyword is None for arg in call.args)
            if position is not None and count + offset > position:
                return None
            if any(arg.keyword is not None and arg.keyword.value == name for arg in call.args):
                return None
        return param.default

    def attribute_stores(self, attr: str, but_none: bool = False) -> int:
        """The stores of `.attr` in the file (`x.attr = ...` of any receiver; an augmented one
        counts twice), those of the literal `None` left out with `but_none`; any `setattr` call,
        or a store of `.attr` in another project file (facts/foreign_stores.py), makes them
        unknown (counted 2)."""
        if self._calls_of("setattr") or attr in stored_elsewhere(self.facts.entries):
            return 2
        if self._stored is None:
            stored: Counter = Counter()
            nones: Counter = Counter()
            for site in self.facts.tree.assigns:
                none = isinstance(site.value, cst.Name) and site.value.value == "None"
                for node in _bound(site.targets):
                    if isinstance(node, cst.Attribute):
                        stored[node.attr.value] += 1
                        nones[node.attr.value] += none
            self._mentions("")  # counts the augmented stores too
            stored.update(self._augmented)
            self._stored, self._nones = stored, nones
        return self._stored[attr] - (self._nones[attr] if but_none else 0)

    def _calls_of(self, name: str) -> list:
        if self._calls is None:
            table: Dict[str, list] = {}
            for site in self.facts.tree.calls:
                if isinstance(site.node.func, cst.Name):
                    table.setdefault(site.node.func.value, []).append(site.node)
            self._calls = table
        return self._calls.get(name, [])

    def _mentions(self, name: str) -> int:
        if self._names is None:
            names: Counter = Counter()
            augmented: Counter = Counter()  # `x.attr += ...`: never a single store
            for node in iter_nodes(self.facts.module):
                if isinstance(node, cst.Name):
                    names[node.value] += 1
                elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute):
                    augmented[node.target.attr.value] += 2
            self._names, self._augmented = names, augmented
        return self._names[name]


def _bound(targets) -> list:
    """What assignment targets rebind, through tuple/list unpacking (`a.x, b = ...`); not the
    attribute a subscript store writes into (`self.cache[i] = v` keeps `self.cache`)."""
    found, pending = [], list(targets)
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.Tuple, cst.List)):
            pending.extend(element.value for element in node.elements)
        elif isinstance(node, cst.StarredElement):
            pending.append(node.value)
        else:
            found.append(node)
    return found
