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
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.facts.syntax import iter_nodes
from amplint.analysis.facts.tree import Frame, scope_key


class ParamDefaults:
    def __init__(self, facts) -> None:
        self.facts = facts
        self._names: Optional[Counter] = None  # Name value -> occurrences in the file
        self._calls: Optional[Dict[str, list]] = None  # function name -> calls `name(...)`

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
            self._names = Counter(
                node.value for node in iter_nodes(self.facts.module) if isinstance(node, cst.Name)
            )
        return self._names[name]
