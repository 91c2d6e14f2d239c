"""relative_names.Names for the `ast` summaries (ast_summary.py), remembered per scope: what a
root name means in a scope is looked up once (the summary resolves a name at every call,
argument and value it reads). Asked only after the walk, when every scope's names are known."""

from __future__ import annotations

from typing import Optional, Tuple

from amplint.analysis.facts.names import _CANONICAL
from amplint.analysis.project.ast_aliases import alias_target
from amplint.analysis.project.relative_names import Names

# a root's meaning in a scope: None (not an import), or (relative, target)
Root = Optional[Tuple[bool, str]]


class ScopedNames(Names):
    """Names.resolve, equal for every name and frame; frames are ast_tree.AstFrame."""

    def resolve(self, dotted, frame) -> Optional[str]:
        if not dotted:
            return None
        root = dotted[0]
        scope = frame.scope
        roots = scope.roots
        try:
            found = roots[root]
        except KeyError:
            found = roots[root] = self._root(root, scope)
        if found is None:
            return None
        relative, target = found
        full = target if len(dotted) == 1 else ".".join((target,) + tuple(dotted[1:]))
        return full if relative else _CANONICAL.get(full, full)

    def _root(self, root: str, scope) -> Root:
        current = scope  # facts.names.resolve: the visible scopes, innermost first
        while current is not None:
            if current.kind != "class" or current is scope:
                if root in current.imports:
                    return False, current.imports[root]
                if root in current.bindings:
                    target = alias_target(current, root)
                    if target is not None:
                        return False, target
                    break  # not an absolute import: a relative one may still name it
            current = current.parent
        if root not in self.relative:
            return None
        current = scope  # Names.resolve: a local name shadows the relative import
        while current is not None and current.kind != "module":
            if current.kind != "class" or current is scope:
                if root in current.bindings or root in current.imports:
                    return None
            current = current.parent
        return True, self.relative[root]
