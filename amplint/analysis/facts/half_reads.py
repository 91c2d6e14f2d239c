"""Where a model a half cast returns is read under an autocast region of the same file, through
any binding of the file (facts/bound_values.py): stored on an instance in one method and read
back as `tts.vits_model` elsewhere, returned by a method (`convert_to_fp16` returning
`self.half()`), passed on as an argument. AMP103 asks it for the casts its own lookups (the cast
inside the region, a name the region reads, a wrapper storing it) do not place."""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.dropped_forwards import dropped_only_names
from amplint.analysis.facts.tree import iter_nodes


def half_read_in_region(facts, cast: cst.Call) -> Optional[Tuple[cst.BaseExpression, cst.With]]:
    """(the first expression of an active explicit region that may hold what `cast` returns,
    the region's `with`), or None."""
    regions = [(w, f) for w, f, r in facts.regions.explicit_regions() if r.active]
    if not regions:
        return None
    bound = facts.bound_values
    atom, codes = bound.half_read_codes(cast)
    if not codes:
        return None
    for with_node, frame in regions:
        # a name read only by forwards whose results are dropped: no number comes of it
        dropped = dropped_only_names(with_node.body, frame)
        for node in iter_nodes(with_node.body):
            if not isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                continue
            if isinstance(node, cst.Name) and node.value in dropped:
                continue
            if bound._code(node) in codes and bound.holds(node, atom):
                return node, with_node
    return None
