"""AMP130's table: the deprecated device-specific AMP APIs, what replaces each, and the text of
the version tests that gate them."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

_AUTOCAST = ("enabled", "dtype", "cache_enabled")
_SCALER = ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
# deprecated API -> (torch.amp name, device, its positional parameters; None: keep positionals)
APIS: Dict[str, Tuple[str, str, Optional[Tuple[str, ...]]]] = {
    "torch.cuda.amp.autocast": ("autocast", "cuda", _AUTOCAST),
    "torch.cpu.amp.autocast": ("autocast", "cpu", _AUTOCAST),
    "torch.cuda.amp.GradScaler": ("GradScaler", "cuda", _SCALER),
    "torch.cpu.amp.GradScaler": ("GradScaler", "cpu", _SCALER),
    "torch.cuda.amp.custom_fwd": ("custom_fwd", "cuda", None),
    "torch.cuda.amp.custom_bwd": ("custom_bwd", "cuda", None),
}
SPELLINGS = {
    "torch.cuda.amp.autocast_mode.custom_fwd": "torch.cuda.amp.custom_fwd",
    "torch.cuda.amp.autocast_mode.custom_bwd": "torch.cuda.amp.custom_bwd",
    "torch.cpu.amp.grad_scaler.GradScaler": "torch.cpu.amp.GradScaler",
}
DEPRECATED_MODULES = ("torch.cuda.amp", "torch.cpu.amp")
DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}
# An `if`/conditional test about the torch version (or what it has)
VERSION_TEST = re.compile(
    r"hasattr\(\s*torch|version|VERSION|GREATER|_LESS|TORCH_\d|torch_\d|_\d_\d+\b|is_torch_|"
    r"packaging"
)
VERSION_LITERAL = re.compile(r"^['\"]?v?\d+(\.\d+)+")
