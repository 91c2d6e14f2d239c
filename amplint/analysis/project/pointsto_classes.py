"""The class half of the points-to solver (pointsto_solve.Solver): project base classes, the C3
method resolution order (cached until a node holding a base grows) and attribute lookup along it."""

from __future__ import annotations

from typing import List, Optional, Tuple


class Classes:
    # -- classes -------------------------------------------------------------------------------
    def bases(self, cls: str) -> Tuple[List[str], bool]:
        """The project base classes of `cls` in order, and whether one base lies outside."""
        out: List[str] = []
        outside = False
        for node in self.classes[cls]["bases"]:
            for value in sorted(self.get(node)):
                if value.startswith("C:") and value[2:] in self.classes:
                    out.append(value[2:])
                elif value.startswith("E:"):
                    outside = True
        return out, outside

    def mro(self, cls: str) -> List[str]:
        """C3 linearisation over project classes (depth-first order if C3 fails); cached until a
        node that holds a base class grows (the reader still depends on those nodes)."""
        cached = self._mro.get(cls)
        if cached is not None:
            for node in cached[1]:
                self.get(node)
            return cached[0]
        order = self._linearise(cls)
        self._mro[cls] = (order, [n for c in order for n in self.classes[c]["bases"]])
        return order

    def _linearise(self, cls: str) -> List[str]:
        def linear(c: str, seen: Tuple[str, ...]) -> List[str]:
            if c in seen:
                return []
            parents = self.bases(c)[0]
            seqs = [linear(p, seen + (c,)) for p in parents] + [list(parents)]
            out = [c]
            while any(seqs):
                for seq in seqs:
                    head = seq[0] if seq else None
                    if head and not any(head in s[1:] for s in seqs):
                        break
                else:
                    return out + [x for s in seqs for x in s if x not in out]
                out.append(head)
                seqs = [s[1:] if s and s[0] == head else s for s in seqs]
            return out
        return linear(cls, ())

    def outside_before(self, cls: str, owner: str) -> bool:
        """Does a class of `cls`'s MRO before `owner` list a base from outside the project before
        its project bases (`class BF16Trainer(PrecisionMixin, AMPTrainer)`)? That base may bind
        the attribute `owner` binds first."""
        order = self.mro(cls)
        for c in order[:order.index(owner)] if owner in order else order:
            for node in self.classes[c]["bases"]:
                values = self.get(node)
                if any(v.startswith("C:") and v[2:] in self.classes for v in values):
                    break
                if any(v.startswith("E:") for v in values):
                    return True
        return False

    def has_outside_base(self, cls: str) -> bool:
        return any(self.bases(c)[1] for c in self.mro(cls))

    def class_attr(self, cls: str, attr: str, after: Optional[str] = None) -> List[Tuple[str, str]]:
        """(value, owner) pairs for `attr` looked up on `cls` along its MRO."""
        order = self.mro(cls)
        if after is not None:
            order = order[order.index(after) + 1:] if after in order else []
        for owner in order:
            found = self.get("C:%s#%s" % (owner, attr))
            if found or attr in self.classes[owner]["defs"]:
                return [(v, owner) for v in sorted(found)]
        return []
