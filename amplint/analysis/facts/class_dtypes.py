"""`self.<attr>` as a dtype: a class attribute bound to a torch dtype, read through the classes
that can be `self`. sd-scripts' `NetworkTrainer.train` opens
`torch.autocast("cuda", dtype=self.autocast_dtype)`; `NetworkTrainer` binds
`autocast_dtype = torch.float16` and `SdxlNetworkTrainer(NetworkTrainer)` in another file
overrides it with `torch.bfloat16`: the region runs in float16 for the one and bfloat16 for the
other.

The project pass (amplint.analysis.project.class_dtype_entries) gives, for a class of this file
and the attribute, the dtype of every class that can be `self` there (the class and its project
subclasses, each reading the first class-body binding along its bases); it answers only when
every one of them is known. One dtype for all is the region's dtype; several are kept with the
classes that give them, so a rule can say for which class its hazard holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from amplint.analysis.facts.tree import Frame

Option = Tuple[str, str]  # ("SdxlNetworkTrainer at sdxl_train_network.py:9", "bfloat16"): the class's line


@dataclass(frozen=True)
class EntryClassDtype:
    """`self.<attr>` in the methods of class `cls` of this file is one of these dtypes, each for
    the classes named with it."""

    cls: str
    attr: str
    options: Tuple[Option, ...]


def self_dtypes(entries, frame: Frame, attr: str) -> Optional[Tuple[Option, ...]]:
    """The (class, dtype) options of `self.<attr>` read in `frame` (a method's scope), or None."""
    owner = frame.class_frame
    if owner is None:
        return None
    for entry in entries:
        if isinstance(entry, EntryClassDtype) and entry.cls == owner.name and entry.attr == attr:
            return entry.options
    return None
