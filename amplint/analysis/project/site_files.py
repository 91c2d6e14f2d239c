"""Which of the files a call-site text search found can hold a call site that reaches the
callee asked about (issue 34): the others are not summarised for it.

A question is ("bind", (file, function key), init[, slots]), what `classvalues._binding_sites`
asks (the call sites that call that function, or that class's constructor when `init`; with
`slots`, only those that fill one of these positions or keywords: the parameter asked about), or
("class", file, class), what `halfspread._constructed_with` asks (the calls of that class).
For each mention of the name in the file's code (site_text.CodeText: comments and plain
strings left out) this decides what flowfacts would record:
- nothing: not a call with an argument it can bind, or (a question with slots) none in the
  slots asked (`self.loss_function(logits=logits, labels=labels)` cannot bind a setter's
  `value`), not `partial`'s first argument, a callee
  that is not a dotted name (`super().forward(x)`, `x[0].cat(y)`), a name nothing binds;
- `self.m(x)` where no file of the project stores an attribute `m` (no store, class attribute
  or dataclass field of that name): its value is `_stores` of the caller's class, which is
  empty (transformers' `self.rescale_and_normalize(images, ...)` in ~140 image processors);
- the file's own module-level function (`def main(` ... `main(args)` in a script), or class
  (except for a constructor question: a class of the file may inherit that `__init__`);
- a reference through the file's imports that leads outside the project (`torch.cat(x)`),
  or, when all its imports give one reference, that reference, resolved by the class flow's
  own `_ref` (as evaluating the site would) and checked as `_binding_sites` checks it.
Anything else (a local, `self.x`, an attribute of a value, a name bound in a way the text
cannot vouch for, a star import with an unbound name, a reference to a module-level variable)
keeps the file, which is then summarised as before."""

from __future__ import annotations

import re
from typing import Dict, Optional

from amplint.analysis.facts.names import _CANONICAL
from amplint.analysis.project.site_text import CodeText, filled_slots, may_bind


class SiteFiles:
    def __init__(self, flow, callee_targets) -> None:
        """`callee_targets`: flowindex's, what a call of a value holding some things runs."""
        self.flow = flow
        self._callee_targets = callee_targets
        self.p = flow.p
        self._code: Dict[str, CodeText] = {}
        self._stored: Dict[str, bool] = {}  # attribute -> may some file store it
        self.spared = 0  # (file, question) pairs answered without the file's summary

    def _view(self, path: str) -> CodeText:
        found = self._code.get(path)
        if found is None:
            found = self._code[path] = CodeText(self.p.files[path])
        return found

    def may_reach(self, path: str, name: str, question: tuple, plain: bool) -> bool:
        """False only when no call site of `name` that flowfacts records in `path` can call
        what `question` asks about."""
        if path == (question[1][0] if question[0] == "bind" else question[1]):
            return True
        view = self._view(path)
        if not view.sure:
            return True
        for position in view.mentions(name):
            if not self._harmless(view, path, position, name, question, plain):
                return True
        self.spared += 1
        return False

    def _harmless(self, view: CodeText, path: str, position: int, name: str, question: tuple,
                  plain: bool) -> bool:
        if view._in_import(position) or view.defines(position):
            return True  # an import or a definition: no call
        parts, start = view.chain(position, name)
        if parts is None:
            return False
        if not parts or (plain and len(parts) > 1):
            return True  # no dotted callee; a chain method's call is not recorded
        args = view.call_args(position, name)
        if args is None or not may_bind(args):
            if not view.partial_first(start):
                return True  # not a call that binds an argument
        elif len(question) > 3 and not view.partial_first(start):
            filled = filled_slots(args)
            if filled is not None and not filled & question[3]:
                return True  # it fills none of the parameter's slots
        return self._callee_harmless(view, path, parts, question)

    def _callee_harmless(self, view: CodeText, path: str, parts, question: tuple) -> bool:
        root = parts[0]
        if root == "self":
            if len(parts) == 2 and not self._stored_anywhere(parts[1]):
                return True
            return len(parts) == 1  # `self(x)` has no value; `self.x(...)` may be anything
        binding = view.binding(root)
        if binding.unknown:
            return False
        if binding.imports:
            if binding.defs or binding.classes:
                return False
            return self._import_harmless(path, binding.imports, parts[1:], question)
        if binding.defs or binding.classes:
            if len(parts) > 1 or binding.defs + binding.classes > 1:
                return False  # `Net.build(x)`: a class attribute, maybe inherited
            if binding.classes:  # the file's own class: its constructor may be inherited
                return question[0] == "class" or not question[2]
            return True  # the file's own function
        return not view.star  # bound nowhere: no value (unless a star import binds it)

    def _stored_anywhere(self, attr: str) -> bool:
        """May some class of the project hold attribute `attr` in the class flow's `_stores`?
        Every store it reads names the attribute as a whole word followed by something other
        than `(`: `self.attr = v`, `self.attr: T = v`, `self.a, self.attr = ...`,
        `self.attr.append(v)`, a class body's `attr = v` or dataclass field `attr: T`. So a
        project whose every mention of the word is followed by `(` (`def attr(`, `self.attr(`,
        `x.attr(`) stores it nowhere. Comments and strings count (conservative)."""
        found = self._stored.get(attr)
        if found is None:
            found = False
            pattern = re.compile(r"(?<!\w)" + re.escape(attr) + r"(?!\w)(?!\s*\()")
            for path in self.p.python:
                text = self.p.files[path]
                if attr in text and pattern.search(text):
                    found = True
                    break
            self._stored[attr] = found
        return found

    def _import_harmless(self, path: str, imports, rest, question: tuple) -> bool:
        refs = []
        for target, _ in imports:
            full = ".".join((target,) + tuple(rest))
            refs.append(_CANONICAL.get(full, full))
        if not any(any(True for _ in self.p._module_candidates(path, ref)) for ref in refs):
            return True  # outside the project: `torch.cat`, `np.concatenate`
        if len(set(refs)) != 1:
            return False  # which import the site sees is not told here
        # one reference, wherever it is imported: the site's callee is that reference (or,
        # where no scope of the site sees the import, no value at all)
        held = self._ref(path, refs[0])
        return held is not None and not self._reaches(held, question)

    def _ref(self, path: str, ref: str) -> Optional[dict]:
        """What the class flow holds for this reference (its `_ref`), or None where that
        would evaluate a module-level variable's values."""
        found = self.p.resolve_ref(path, ref)
        if found is not None and found[1]:
            where, attrs = found
            summary = self.p.summary(where)
            head = attrs[0]
            if summary is not None and head not in summary.classes and not (
                    len(attrs) == 1 and head in summary.functions):
                if summary.flow is not None and head in summary.flow.globals:
                    return None
        return self.flow._ref(path, ref, 1)

    def _reaches(self, held: dict, question: tuple) -> bool:
        if question[0] == "class":
            return ("class", question[1], question[2]) in held
        _, target, init = question[:3]
        return self.flow._offset(self._callee_targets(held), target, init) is not None
