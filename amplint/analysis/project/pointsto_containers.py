"""Containers and iteration for the points-to solver (a mixin of pointsto_solve.Solver).

Lists, tuples and sets are collapsed to their elements (field "*"); a literal list or tuple
("L:<site>!") also keeps field [i] per position, and "+" for what is added later. Dicts keep a
field per literal key ("[k]"), "[*]" for stores under an unknown key and "[**]" for everything; a
defaultdict's subscript files its factory's empty container under the key.
Iterating an instance follows __iter__/__next__; a generator yields its function's "<yield>"."""

from __future__ import annotations

from typing import List, Optional, Set


class Containers:
    # -- containers and iteration --------------------------------------------------------------
    def keys(self, key: Optional[str], key_node: Optional[str], store: bool = False) -> Optional[List[str]]:
        """The literal keys an index may use; None for any key; [] to wait (first round) or for
        none (a key of a body that does not run as itself)."""
        if key is not None:
            return [key]
        values = self.get(key_node) if key_node else set()
        if values and all(v[:2] in ("S:", "N:") for v in values):
            return sorted(repr(v[2:]) if v[0] == "S" else v[2:] for v in values)
        if not values and key_node and not self.final:
            self.waiting.add(self._cur)
            return []
        if not values and key_node and self.uncalled_key(key_node, store):
            return []
        return None

    def uncalled_key(self, key_node: str, store: bool = False) -> bool:
        """The key is a parameter of a function no call runs as itself: every call went to a copy
        of its own (pointsto_copies.keyed_literal), or (for a store) none was seen. Its key is no
        key: a store under it would file its box under every key, for every copy to read. (A
        read in a function nothing calls still reads every key, as PyCG does.)"""
        func, _, param = key_node[2:].rpartition("#") if key_node.startswith("V:") else ("", "", "")
        info = self.funcs.get(func)
        return (info is not None and param in info.get("keyed", ()) and func not in self.invoked
                and (store or func in self._copies))

    def nth(self, value: str, key: str) -> Set[str]:
        if value.startswith("L:") and value.endswith("!") and key.isdigit():
            return self.get("%s#[%s]" % (value, key)) | self.get(value + "#+")
        return self.elements(value)

    def _nth(self, dst: str, src: str, i: int) -> None:
        for value in sorted(self.get(src)):
            self.add(dst, self.nth(value, str(i)))

    def _slice(self, dst: str, base: str, start: Optional[int]) -> None:
        for value in sorted(self.get(base)):
            if not (value.startswith("L:") and value.endswith("!")):
                self.add(dst, {value})
                continue
            part = value[:-1] + ("~%s!" % start if start is not None else "~s")
            for field in ("*", "+"):
                self.add("%s#%s" % (part, field), self.get("%s#%s" % (value, field)))
            if start is not None:
                for i in range(start, start + 16):
                    self.add("%s#[%d]" % (part, i - start), self.get("%s#[%d]" % (value, i)))
            self.add(dst, {part})

    def _dictset(self, new: str, old: str, key: str, src: str) -> None:
        for value in sorted(self.get(old)):
            if not value.startswith("D:"):
                self.add(new, {value})
                continue
            box = "%s~u%d" % (value, self._cur)
            if value in self.dict_defaults:
                self.dict_defaults[box] = self.dict_defaults[value]
            for known in sorted(self.get(value + "#keys")):
                field = "%s#[%s]" % (box, known[2:])
                if known[2:] != key:
                    self.add(field, self.get("%s#[%s]" % (value, known[2:])))
                    self.add(box + "#[**]", self.get(field))
            for field in ("[%s]" % key, "[**]"):
                self.add("%s#%s" % (box, field), self.get(src))
            self.add(box + "#[*]", self.get(value + "#[*]"))
            self.add(box + "#[**]", self.get(value + "#[*]"))
            self.add(new, {box})

    def elements(self, value: str) -> Set[str]:
        if value.startswith("L:"):
            return set(self.get(value + "#*"))
        if value.startswith("G:"):
            return set(self.get("V:%s#<yield>" % value[2:]))
        if value.startswith("O:"):
            return {value}  # an item of what outside code passed
        return set()

    def _elem(self, dst: str, src: str) -> None:
        for value in sorted(self.get(src)):
            self.add(dst, self.elements(value))

    def _iter(self, dst: str, src: str, caller: str) -> None:
        for value in sorted(self.get(src)):
            if value.startswith("I:") and value[2:] in self.classes:
                for it in self.protocol(value, "__iter__", caller):
                    if it.startswith("I:"):
                        self.add(dst, self.protocol(it, "__next__", caller))
                    else:
                        self.add(dst, self.elements(it))
            else:
                self.add(dst, self.elements(value))

    def protocol(self, inst: str, method: str, caller: Optional[str], args=()) -> Set[str]:
        out: Set[str] = set()
        if inst[2:] not in self.classes:
            return out
        for found, _owner in self.class_attr(inst[2:], method):
            bound = self.bind(found, inst)
            if bound:
                out |= self.invoke(bound, list(args), {}, caller, None)
        return out

    def _index(self, dst: str, base: str, key: Optional[str], key_node: Optional[str], caller: str) -> None:
        keys = self.keys(key, key_node)
        if keys == []:
            return
        for value in sorted(self.get(base)):
            if value.startswith("D:"):
                if value in self.dict_defaults:
                    self.default_box(value, keys)
                fields = ["[%s]" % k for k in keys] + ["[*]"] if keys is not None else ["[**]"]
                for field in fields:
                    self.add(dst, self.get("%s#%s" % (value, field)))
            elif value.startswith("I:"):
                self.add(dst, self.protocol(value, "__getitem__", caller, [set()]))
            elif keys is not None:
                for k in keys:
                    self.add(dst, self.nth(value, k))
            else:
                self.add(dst, self.elements(value))

    def default_box(self, value: str, keys: Optional[List[str]]) -> None:
        """`d[k]` of a defaultdict files the factory's empty container under k (one box per key,
        so that `d[k].append(f)` reaches `d[k]` and `d.get(k)` alone); under an unknown key, a
        box every read sees ("[*]")."""
        kind = self.dict_defaults[value]
        for k in keys if keys is not None else ["*"]:
            box = "%s%s~default[%s]" % (kind, value[2:], k)
            self.add("%s#[%s]" % (value, k), {box})
            self.add(value + "#[**]", {box})

    def _setindex(self, base: str, key: Optional[str], src: str, key_node: Optional[str]) -> None:
        values = self.get(src)
        keys = self.keys(key, key_node, store=True)
        if keys == []:
            return
        for value in sorted(self.get(base)):
            if value.startswith("D:"):
                for k in keys if keys is not None else ["*"]:
                    self.add("%s#[%s]" % (value, k), values)
                self.add(value + "#[**]", values)
            elif value.startswith("L:"):
                self.add(value + "#*", values)
                self.add(value + "#+", values)

    def _dictmerge(self, box: str, src: str) -> None:
        for value in sorted(self.get(src)):
            if value.startswith("D:"):
                self.add(box + "#[*]", self.get(value + "#[**]"))
                self.add(box + "#[**]", self.get(value + "#[**]"))
