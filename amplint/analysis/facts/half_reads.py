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


def half_read_in_region(facts, cast: cst.Call) -> Optional[Tuple[cst.BaseExpression, int]]:
    """(the first expression of an active explicit region that may hold what `cast` returns,
    the region's line), or None."""
    regions = [(w, f) for w, f, r in facts.regions.explicit_regions() if r.active]
    if not regions:
        return None
    bound = facts.bound_values
    reads = bound.half_reads(cast)
    if not reads:
        return None
    for with_node, frame in regions:
        # a name read only by forwards whose results are dropped: no number comes of it
        dropped = dropped_only_names(with_node.body, frame)
        nodes = [n for n in iter_nodes(with_node.body) if isinstance(n, (cst.Name, cst.Attribute, cst.Call))
                 and not (isinstance(n, cst.Name) and n.value in dropped)]
        spans = bound.spans_of(nodes + [with_node])
        for node in nodes:
            if spans[id(node)] in reads:
                return node, spans[id(with_node)][0]
    return None
