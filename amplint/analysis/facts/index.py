"""Lookups over one file's walk (`tree.Collector`) that several facts ask once per statement:
assignments by the name they bind, the statement order, self-attributes and calls by class.
Each table is built on first use in one pass over the walk's lists, so a question asked for
every statement of a file costs O(1) or O(log n) instead of a scan of the file (issue 34: a
50,000-line file took 25 minutes when every `x[i] = name` scanned every assignment).

`examined` counts the entries the lookups returned or stepped over: a test checks that it
does not grow with the file, so a scan per query cannot come back unnoticed."""

from __future__ import annotations

from bisect import bisect_left
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.syntax import bound_names, self_attr
from amplint.analysis.facts.tree import AssignSite, CallSite, Collector, Frame


class FileIndex:
    def __init__(self, tree: Collector) -> None:
        self.tree = tree
        self.examined = 0
        self._by_target: Optional[Dict[str, List[AssignSite]]] = None
        self._by_scope: Optional[Dict[Tuple[int, str], Tuple[List[int], List[AssignSite]]]] = None
        self._self_assigns: Optional[Dict[int, Dict[str, List[AssignSite]]]] = None
        self._class_calls: Optional[Dict[int, List[CallSite]]] = None

    def order(self, stmt: Optional[cst.CSTNode]) -> Optional[int]:
        """The position of a simple statement line in the file (source order), else None."""
        if stmt is None:
            return None
        return self.tree.line_order.get(id(stmt))

    def assigns_to(self, name: str) -> List[AssignSite]:
        """Assignments with a target that is the bare name `name` (`name = ...`), in order."""
        if self._by_target is None:
            table: Dict[str, List[AssignSite]] = {}
            for site in self.tree.assigns:
                seen = set()
                for target in site.targets:
                    if isinstance(target, cst.Name) and target.value not in seen:
                        seen.add(target.value)
                        table.setdefault(target.value, []).append(site)
            self._by_target = table
        found = self._by_target.get(name, [])
        self.examined += 1
        return found

    def last_binding_before(self, scope: Frame, name: str, order: int) -> Optional[AssignSite]:
        """The last assignment in `scope` binding `name` (any target, unpacking included) on a
        simple statement line before position `order`; of several on one line, the first."""
        if self._by_scope is None:
            table: Dict[Tuple[int, str], Tuple[List[int], List[AssignSite]]] = {}
            line_order = self.tree.line_order
            for site in self.tree.assigns:
                index = line_order.get(id(site.line_stmt)) if site.line_stmt is not None else None
                if index is None:
                    continue
                names = {n for target in site.targets for n in bound_names(target)}
                for bound in names:
                    orders, sites = table.setdefault((id(site.frame.scope), bound), ([], []))
                    orders.append(index)  # the walk is in source order: already sorted
                    sites.append(site)
            self._by_scope = table
        entry = self._by_scope.get((id(scope), name))
        self.examined += 1
        if entry is None:
            return None
        orders, sites = entry
        position = bisect_left(orders, order) - 1
        if position < 0:
            return None
        while position > 0 and orders[position - 1] == orders[position]:
            position -= 1
            self.examined += 1
        return sites[position]

    def self_assigns(self, cls: Frame) -> Dict[str, List[AssignSite]]:
        """`self.<attr> = value` in the methods of class `cls`: attr -> the assignments (one
        entry per target naming it)."""
        if self._self_assigns is None:
            table: Dict[int, Dict[str, List[AssignSite]]] = {}
            for site in self.tree.assigns:
                owner = site.frame.class_frame
                if owner is None:
                    continue
                for target in site.targets:
                    attr = self_attr(target)
                    if attr is not None:
                        table.setdefault(id(owner), {}).setdefault(attr, []).append(site)
            self._self_assigns = table
        self.examined += 1
        return self._self_assigns.get(id(cls), {})

    def class_calls(self, cls: Frame) -> List[CallSite]:
        """Calls made in the methods of class `cls`, in order."""
        if self._class_calls is None:
            table: Dict[int, List[CallSite]] = {}
            for site in self.tree.calls:
                owner = site.frame.class_frame
                if owner is not None:
                    table.setdefault(id(owner), []).append(site)
            self._class_calls = table
        self.examined += 1
        return self._class_calls.get(id(cls), [])
