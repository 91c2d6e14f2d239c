"""Which of the files a call-site text search found can hold a call site that reaches the
callee asked about (issue 34): the others are not summarised for it.

A question is ("bind", (file, function key), init[, slots]), what `classbinding._binding_sites`
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
  or dataclass field of that name), for a question about anything but a method named `m`: its
  value is `_stores` of the caller's class, which is empty (transformers'
  `self.rescale_and_normalize(images, ...)` in ~140 image processors), or a method `m` of the
  caller's class or of one of its bases (round 49: an inherited method is `self.m`'s value too,
  so for a question about some class's method `m` the file is kept, unless the caller's
  module-level class itself defines `def m`: site_text.in_class_defining);
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
from typing import Dict, FrozenSet, List, Optional, Tuple

from amplint.analysis.facts.names import _CANONICAL
from amplint.analysis.project.call_arguments import filled_slots, may_bind
from amplint.analysis.project.call_words import conditionally_called
from amplint.analysis.project.dispatch import renamed, text_subclasses
from amplint.analysis.project.site_text import CodeText
from amplint.analysis.project.scan_view import mentioned_outside, texts_holding
from amplint.analysis.project.text_views import code_view, defined_names


class SiteFiles:
    def __init__(self, flow, callee_targets) -> None:
        """`callee_targets`: flowindex's, what a call of a value holding some things runs."""
        self.flow = flow
        self._callee_targets = callee_targets
        self.p = flow.p
        self._stored: Dict[str, bool] = {}  # attribute -> may some file store it
        self._subclass_files: Dict[str, Optional[tuple]] = {}  # class name -> text_subclasses
        self._renamed: Dict[str, bool] = {}  # class name -> may some file bind it under another name
        self._defined: Dict[str, bool] = {}  # name -> member_anywhere
        self._named: Dict[tuple, bool] = {}  # (file, class) -> may a value hold it (class_named)
        self._conditional: Dict[str, FrozenSet[str]] = {}  # file -> conditionally_called of its text
        # what each mention's text says, per (file, name, plain): the same for every question,
        # so each parameter of a function (one question each) does not read the text again
        self._mentions: Dict[tuple, Tuple[List[Optional[tuple]], List[int]]] = {}
        # (file, callee, question without its slots) -> `_callee_harmless`: a function of these
        # only (resolutions and summaries, which never change once made), its side effects
        # (summaries made) done by its first call
        self._callees: Dict[tuple, bool] = {}
        self._own_only: Dict[tuple, bool] = {}  # (file, name, plain) -> `reaches_own_only`
        self.spared = 0  # (file, question) pairs answered without the file's summary
        self.mentions_read = 0  # mentions whose text was analysed (operation counts for tests)
        self.callees_checked = 0  # `_callee_harmless` evaluations
        self.own_methods = 0  # `self.m(...)` mentions inside a class defining m (in_class_defining)
        self.supers_spared = 0  # (file, question) pairs a subclass's `super().__init__` no longer keeps

    def _view(self, path: str) -> CodeText:
        return code_view(self.p, path)  # (shared with the pass's other text readers)

    def may_reach(self, path: str, name: str, question: tuple, plain: bool) -> bool:
        """False only when no call site of `name` that flowfacts records in `path` can call
        what `question` asks about."""
        if path == (question[1][0] if question[0] == "bind" else question[1]):
            return True
        view = self._view(path)
        if not view.sure:
            return True
        slots = question[3] if len(question) > 3 else None
        for fact in self._mention_facts(view, path, name, plain):
            if fact is None:
                continue  # harmless whatever the question
            parts, filled = fact
            if parts is None:
                return True
            if slots is not None and filled is not None and not filled & slots:
                continue  # it fills none of the parameter's slots
            key = (path, parts, question[:3])  # an own method's `self.m` has parts ("self", m, "")
            harmless = self._callees.get(key)
            if harmless is None:
                self.callees_checked += 1
                harmless = self._callees[key] = self._callee_harmless(view, path, parts, question)
            if not harmless:
                return True
        self.spared += 1
        return False

    def reaches_own_only(self, path: str, name: str, plain: bool) -> bool:
        """True when `may_reach` is False for every question about a callee of another file:
        each mention of `name` is harmless on its text, or calls `self`, the file's one
        module-level `def name`, or a name bound nowhere (`self.name(...)` is not: it may call a
        base's method of another file, which only `may_reach` can rule out per question). Read
        once per (file, name), not once per question: icefall's ~60 recipes each define and
        call `compute_loss`, and a question about one recipe's function read every recipe."""
        key = (path, name, plain)
        found = self._own_only.get(key)
        if found is None:
            view = self._view(path)
            found = self._own_only[key] = view.sure and all(
                fact is None or (fact[0] is not None and self._harmless_anyway(view, path, fact[0]))
                for fact in self._mention_facts(view, path, name, plain))
        return found

    def _harmless_anyway(self, view: CodeText, path: str, parts) -> bool:
        """The cases of `_callee_harmless` that are True whatever the question."""
        root = parts[0]
        if root == "self":  # `self.m(...)` may call a base's method `m` of another file
            return len(parts) == 1 or (parts[-1] == "" and not self._stored_anywhere(parts[1], path))
        binding = view.binding(root)
        if binding.unknown or binding.imports:
            return False
        if binding.defs or binding.classes:
            return len(parts) == 1 and not binding.classes and binding.defs == 1
        return not view.star

    def binds_indirectly(self, path: str, name: str, question: tuple, plain: bool, binders) -> bool:
        """call_words.binds_indirectly for this question: a subclass's `super().__init__(...)`
        binds the base's parameters only with the arguments it passes, so a file whose every
        such call passes none that flowfacts records (`super().__init__(*args, **kwargs)`,
        `super().__init__()`) or, for a question with slots, none in them
        (`super().__init__(cfg, input_shape)` for a keyword-only `anchor_generator`) binds
        nothing that way. `partial(x.name, ...)` and a conditional class call keep the file as
        before."""
        partial, other = binders
        if name in partial:
            return True
        if plain or name not in other:
            return False
        conditional = self._conditional.get(path)
        if conditional is None:  # (asked once per file, not once per question and name)
            conditional = self._conditional[path] = conditionally_called(self.p.files[path])
        if name in conditional:
            return True
        view = self._view(path)
        if not view.sure:
            return True
        slots = question[3] if len(question) > 3 else None
        for args in view.super_init_args():
            if args is None:
                return True
            if not may_bind(args):
                continue  # starred or literal arguments only: flowfacts records no call
            filled = filled_slots(args) if slots is not None else None
            if filled is None or filled & slots:
                return True
        self.supers_spared += 1
        return False

    def _mention_facts(self, view: CodeText, path: str, name: str, plain: bool):
        """The facts of the mentions of `name` in the file, in order; read as far as asked
        (a question stops at the first mention that keeps the file), each once."""
        key = (path, name, plain)
        known = self._mentions.get(key)
        if known is None:
            known = self._mentions[key] = ([], view.mentions(name))
        facts, positions = known
        for index in range(len(positions)):
            if index == len(facts):
                facts.append(self._fact(view, positions[index], name, plain))
            yield facts[index]

    def _fact(self, view: CodeText, position: int, name: str, plain: bool) -> Optional[tuple]:
        """What the text says of one mention, for any question: None when it is harmless
        (no recorded call site can be there), else (its dotted callee as a tuple, or None when
        the text cannot tell; the slots its arguments fill, or None when they may fill any)."""
        self.mentions_read += 1
        if view._in_import(position) or view.defines(position):
            return None  # an import or a definition: no call
        parts, start = view.chain(position, name)
        if parts is None:
            return (None, None)
        if not parts or (plain and len(parts) > 1):
            return None  # no dotted callee; a chain method's call is not recorded
        args = view.call_args(position, name)
        if args is None or not may_bind(args):
            if not view.partial_first(start):
                return None  # not a call that binds an argument
            return (tuple(parts), None)
        if view.partial_first(start):
            return (tuple(parts), None)  # partial shifts the positions
        if len(parts) == 2 and parts[0] == "self" and view.in_class_defining(position, name):
            # the caller's class's own `def name`: the same whatever it derives from
            self.own_methods += 1
            return (("self", name, ""), filled_slots(args))
        return (tuple(parts), filled_slots(args))

    def _callee_harmless(self, view: CodeText, path: str, parts, question: tuple) -> bool:
        root = parts[0]
        if root == "self":
            if parts[-1] == "":  # in a class whose own `def m` `self.m` holds (unless m is stored)
                return not self._stored_anywhere(parts[1], path)
            if len(parts) == 2:
                inherits = self._may_inherit(path, question, parts[1])
                # the cheap answers first: a base's method by the bases' words, then a store;
                # an alias of one of the classes (a scan per class name) only where it decides
                if inherits is not True and not self._stored_anywhere(parts[1], path):
                    return inherits is False or not self._any_renamed(inherits)
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

    def _may_inherit(self, path: str, question: tuple, name: str):
        """May a class of `path` inherit the method `name` the question asks about (`Cls.name`):
        does the file write, in some `class X(...)` bases, the asked class or a class whose
        bases write it, transitively (dispatch.BaseIndex's words)? True also where the chain
        is deeper than dispatch's MAX_DEPTH. Where the words rule it out, the names of the
        classes it followed: some file may still import or bind one of them under another
        name (`import Cls as Base`, `Base = Cls`) that a class's bases write (`_any_renamed`)."""
        if question[0] != "bind" or question[2]:
            return False
        cls, _, method = question[1][1].rpartition(".")
        if not cls or method != name:
            return False
        cls = cls.rsplit(".", 1)[-1]
        found = self._subclass_files.get(cls, ...)
        if found is ...:
            found = self._subclass_files[cls] = text_subclasses(self.p, cls)
        if found is None or path in found[0]:
            return True
        return found[1]

    def _any_renamed(self, names) -> bool:
        """dispatch.renamed of these class names, each name's answer read once per pass (the
        classes a question follows are mostly those of the questions before it)."""
        for name in names:
            found = self._renamed.get(name)
            if found is None:
                found = self._renamed[name] = renamed(self.p, (name,))
            if found:
                return True
        return False

    def _stored_anywhere(self, attr: str, near: Optional[str] = None) -> bool:
        """May some class of the project hold attribute `attr` in the class flow's `_stores`?
        Every store it reads names the attribute as a whole word followed by something other
        than `(`: `self.attr = v`, `self.attr: T = v`, `self.a, self.attr = ...`,
        `self.attr.append(v)`, a class body's `attr = v` or dataclass field `attr: T`. So a
        project whose every mention of the word is followed by `(` (`def attr(`, `self.attr(`,
        `x.attr(`) stores it nowhere. Comments and strings count (conservative).
        `near`: a Python file of the project read first, the one whose `self.attr(...)` asks
        (where the attribute is stored if anywhere, mostly: a class calls what it stores), so
        that an attribute stored there is not searched for through the files before it."""
        found = self._stored.get(attr)
        if found is None:
            found = self._stored[attr] = (near is not None and _stores(self.p.files[near], attr)) or any(
                _stores(text, attr) for _path, text in texts_holding(self.p, attr))
        return found

    def member_anywhere(self, attr: str) -> bool:
        """May an instance of some project class have `attr` as a method or a stored attribute?
        False when no file writes `def attr` (a class's methods are its `def` statements) and
        no file stores `attr` (`_stored_anywhere`): then `x.attr(...)` runs no project code,
        whatever `x` holds (classflow.call_targets). The `def` is looked up in the pass's index
        of the words written after `def` (text_views.defined_names), the store scanned for;
        a name that is not one run of word characters is scanned for both in one pass."""
        found = self._defined.get(attr)
        if found is None and _WORD.fullmatch(attr) is not None:
            # a `def attr` found in the pass's index of defined names, not by a scan per name
            found = self._defined[attr] = attr in defined_names(self.p) or self._stored_anywhere(attr)
        if found is None:
            found = bool(self._stored.get(attr))
            for path in (() if found else self.p.python):
                text = self.p.files[path]
                if any(not called or _after_def(text, at) for at, called in _word_uses(text, attr)):
                    found = True
                    break
            if not found:
                self._stored[attr] = False
            self._defined[attr] = found
        return found

    def class_named(self, path: str, key: str) -> bool:
        """For function `key` of `path`: unless it is a method `C.m` of a module-level class C
        that only its own `class C` statement names (no other mention in any file of the
        project, comments, strings, configs and longer words included) and that no
        `@X.register...` decorator may register (no `.register` in its file), True. False means that no value of the class
        flow holds the class C, an instance of C or of a subclass (each comes from a text that
        names C: a reference, an import, a base, an annotation, a config's string, a
        registration call; or from a `@X.register_module()` decorator), so nothing holds the
        method (`func`, `bound` and `cfunc` of it come from those): no call site reaches it."""
        parts = key.split(".")
        if len(parts) != 2:
            return True
        cls = parts[0]
        found = self._named.get((path, cls))
        if found is None:
            found = self._named[(path, cls)] = self._class_named(path, cls)
        return found

    def _class_named(self, path: str, cls: str) -> bool:
        # substrings, not whole words: a superset of the mentions (`FooBar` counts for `Foo`)
        own = self.p.files.get(path, "")
        if own.count(cls) != 1 or ".register" in own:
            return True
        statement = re.search(r"^class[ \t]+" + re.escape(cls) + r"(?!\w)", own, re.M)
        if statement is None or own.find(cls) != statement.end() - len(cls):
            return True
        return mentioned_outside(self.p, cls, path)

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


_WORD_CHAR = re.compile(r"\w")
_WORD = re.compile(r"\w+")


def _word_uses(text: str, word: str):
    r"""(position, called) for each mention of `word` as a whole word (`\w` on neither side),
    `called` when `\s*(` follows it: what `(?<!\w)word(?!\w)` and `(?!\s*\()` tell, found with
    `str.find` (a pattern opening with a lookbehind is tried at every position of the text)."""
    at = text.find(word)
    size = len(text)
    while at != -1:
        end = at + len(word)
        if not (at and _WORD_CHAR.match(text, at - 1)) and not _WORD_CHAR.match(text, end):
            while end < size and text[end].isspace():
                end += 1
            yield at, end < size and text[end] == "("
        at = text.find(word, at + 1)


def _stores(text: str, attr: str) -> bool:
    """Does `text` mention `attr` as a whole word not followed by `\\s*(`?"""
    return attr in text and any(not called for _, called in _word_uses(text, attr))


def _after_def(text: str, at: int) -> bool:
    r"""Does `(?<!\w)def\s+` end at `at`?"""
    start = at
    while start and text[start - 1].isspace():
        start -= 1
    return start < at and text.endswith("def", 0, start) and not (
        start > 3 and _WORD_CHAR.match(text, start - 4))
