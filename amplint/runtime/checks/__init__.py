"""Per-hazard runtime checks.

Each check module defines ``CODE`` and ``install(monitor) -> dict``: a table from torch
functions (as ``TorchFunctionMode`` sees them) to ``(pre, post)`` callbacks, where
``pre(func, args, kwargs)`` runs before the call and ``post(func, args, kwargs, result)`` after
it (either may be None).  Module-level checks (AMP103, and AMP101's "half module's forward")
use the monitor's :class:`~amplint.runtime.modules.ModuleTracker` instead.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import torch

from . import backward, bce, dtype_from_input, escape, factory, fill, half_module, scaled_step

CHECK_MODULES = {
    m.CODE: m
    for m in (factory, bce, half_module, backward, escape, fill, dtype_from_input, scaled_step)
}

HALF_DTYPES = (torch.float16, torch.bfloat16)

Pre = Callable[..., None]
Post = Callable[..., None]
Table = Dict[Callable, Tuple[List[Pre], List[Post]]]


def build_table(monitor, codes) -> Table:
    """Merge the function tables of the enabled checks into one lookup table."""
    table: Table = {}
    for code in sorted(codes):
        module = CHECK_MODULES.get(code)
        if module is None:
            continue
        for func, (pre, post) in module.install(monitor).items():
            pres, posts = table.setdefault(func, ([], []))
            if pre is not None:
                pres.append(pre)
            if post is not None:
                posts.append(post)
    return table


def autocast_on(device_type: str) -> bool:
    """Whether autocast is enabled for ``device_type`` right now."""
    try:
        return torch.is_autocast_enabled(device_type)
    except (RuntimeError, TypeError, ValueError):  # device types without autocast
        return False


def autocast_dtype(device_type: str) -> Optional[torch.dtype]:
    try:
        return torch.get_autocast_dtype(device_type)
    except (RuntimeError, TypeError, ValueError, AttributeError):
        return None


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")
