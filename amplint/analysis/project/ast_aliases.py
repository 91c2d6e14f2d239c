"""facts.tree's `Frame.aliases` for the `ast` summaries: a name bound once, straight in a module's
or a function's body, to a dotted name or a call of one (`loss = F.binary_cross_entropy`,
`original = torch.gather`, `clip = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)`),
and what such a name resolves to (facts.names.resolve / _alias_target). LibCST's summaries
name the alias's target at its calls and values; without this the `ast` summary named a local.

The values live in `frame.ast_aliases` (`ast` nodes): facts' own resolver, asked of an `ast`
frame, keeps reading `Frame.aliases` (empty), so every `ast` reader resolves through here."""

from __future__ import annotations

import ast
from typing import Optional

from amplint.analysis.facts.names import _CANONICAL, _KEYWORD_READERS, _READ_KEYWORDS, visible_scopes
from amplint.analysis.project.ast_tree import call_args, dotted


def keep_aliases(collector) -> None:
    """facts.tree.Collector._keep_aliases over an ast_tree.AstCollector, once its walk is done."""
    counts, unaliasable, walrus = collector.counts, collector.unaliasable, collector.walrus_names
    for frame in collector.frames:
        if frame.kind != "module" and frame.kind != "function":
            continue
        for stmt in frame.node.body:  # facts: an assignment straight in the body (depth 1)
            if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
                continue
            value = stmt.value
            if not (dotted(value) or (type(value) is ast.Call and dotted(value.func) is not None)):
                continue  # facts.tree._alias_value
            name = stmt.targets[0].id
            if (counts.get((id(frame), name)) == 1 and name not in unaliasable and name not in walrus
                    and name not in frame.imports and name not in frame.alternatives):
                frame.ast_aliases[name] = value


def absolute(dotted_name, frame, depth: int = 0) -> Optional[str]:
    """facts.names.resolve over `ast` frames: absolute imports and aliases."""
    if not dotted_name:
        return None
    root, rest = dotted_name[0], dotted_name[1:]
    for scope in visible_scopes(frame):
        if root in scope.imports:
            full = ".".join((scope.imports[root],) + tuple(rest))
            return _CANONICAL.get(full, full)
        if root in scope.bindings:
            target = alias_target(scope, root, depth)
            if target is None:
                return None
            full = ".".join((target,) + tuple(rest))
            return _CANONICAL.get(full, full)
    return None


def alias_target(scope, name: str, depth: int = 0) -> Optional[str]:
    """What `name`, bound in `scope`, names as an alias (facts.names.resolve's alias step at
    `depth`); None: not an alias, or an alias of nothing known."""
    value = scope.ast_aliases.get(name)
    if value is None or depth > 4:
        return None
    depth += 1
    if type(value) is not ast.Call:
        return absolute(dotted(value), scope, depth)
    args = call_args(value)
    if not args or args[0][0] is not None or args[0][1] or any(
        keyword is None or star for keyword, star, _ in args[1:]
    ) or absolute(dotted(value.func), scope, depth) != "functools.partial":
        return None  # facts: what another file's function returns (no entries in a summary)
    if any(keyword in _READ_KEYWORDS for keyword, _, _ in args[1:]):
        return None
    target = absolute(dotted(args[0][2]), scope, depth)
    return None if target in _KEYWORD_READERS else target
