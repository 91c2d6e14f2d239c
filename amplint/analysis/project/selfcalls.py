"""`self.m(...)` in a method, as one file's summary records it for template-method dispatch
(dispatch.py): under the file's own active region (a root, with the region), or with no region
of the file around it (followed when propagation reaches the method)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.project.flowfacts import frame_key


def record_self_call(summarizer, site) -> None:
    func = site.node.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return
    function = site.frame.function
    key = frame_key(function) if function is not None else None
    # methods of the module's classes only: `self` of a nested function is not followed
    if key is None or key.count(".") != 1 or key.split(".")[0] not in summarizer.summary.classes:
        return
    region = summarizer.facts.regions.region_of(site.frame)
    if region is not None:
        owner = _region_owner(summarizer, region.root)
        # the region is this class's own (`@auto_fp16 forward` -> self.forward_test ->
        # self.extract_feat); reached from elsewhere (`Net()(x)`) the class is known exactly
        if region.active and owner is not None and owner.split(".")[0] == key.split(".")[0]:
            index = summarizer.region_index(region.root)
            summarizer.self_roots.append((key, func.attr.value, site.node, index, owner))
            summarizer.want_line(site.node)
        return
    owner = summarizer.summary.functions.get(key)
    if owner is not None:
        owner.self_calls.append((func.attr.value, site.node))  # type: ignore[arg-type]


def _region_owner(summarizer, root) -> Optional[str]:
    """The key of the method whose decorator or `with` opens the region."""
    owners = summarizer.__dict__.setdefault("_region_owners", {})
    if id(root) not in owners:
        tree = summarizer.tree
        frames = [f for f in tree.frames if f.kind == "function" and f.region is root]
        frames += [body for _, body in tree.withs if body.region is root]
        functions = [f.function if f.kind == "with" else f for f in frames]
        keys = [frame_key(f) for f in functions if f is not None]
        owners[id(root)] = keys[0] if len(keys) == 1 else None
    return owners[id(root)]
