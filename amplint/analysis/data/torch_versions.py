"""The torch release that introduced each API a fix writes, and the project's target torch.

A fix that writes one of these names checks `TorchTarget.allows(name)` first; below the
release it writes a spelling that works on the target, or offers no fix and says why
(`TorchTarget.why_not(name)`). Keys are the names as a fix writes them (`torch.X`; `Tensor.X`
for methods; `API(keyword=)` for a keyword added later than the API).

Each entry was checked against torch's released wheels (the release's own files, read without
importing them) by `python benchmarks/torch_versions.py`: the name is defined at the release
given (file:line below), at every later release checked, and not in the release before. APIs
written in C are found in the release's `torch/_C/*.pyi` stubs, or before those existed (1.0)
in the argument-parser signatures compiled into `libtorch_python`. 1.0 is the floor
(`OLDEST`): no older target is accepted, so those entries are checked to exist in 1.0 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

Version = Tuple[int, int]

# name -> (first release with it, evidence)
INTRODUCED: Dict[str, Tuple[Version, str]] = {
    # AMP130
    "torch.amp.autocast": ((1, 12), "torch 1.12.0: torch/amp/autocast_mode.py:16 `class "
                           "autocast`, exported by torch/amp/__init__.py; 1.11.0 has no "
                           "torch/amp package (torch.autocast lived in torch/autocast_mode.py)"),
    "torch.amp.GradScaler": ((2, 3), "torch 2.3.0: torch/amp/grad_scaler.py:48 `class "
                             "GradScaler`, exported by torch/amp/__init__.py; absent from "
                             "2.2.0's torch/amp/__init__.py (autocast only)"),
    "torch.amp.custom_fwd": ((2, 4), "torch 2.4.0: torch/amp/autocast_mode.py:415 `def "
                             "custom_fwd`; absent from 2.3.0's torch/amp"),
    "torch.amp.custom_bwd": ((2, 4), "torch 2.4.0: torch/amp/autocast_mode.py:474 `def "
                             "custom_bwd`; absent from 2.3.0's torch/amp"),
    # AMP102's fp32 island
    "torch.autocast": ((1, 10), "torch 1.10.0: torch/autocast_mode.py:5 `class autocast`, "
                       "imported by torch/__init__.py; absent from 1.9.0"),
    "torch.cuda.amp.autocast": ((1, 6), "torch 1.6.0: torch/cuda/amp/autocast_mode.py:8 `class "
                                "autocast`; 1.5.0's torch/cuda/amp has GradScaler only"),
    # AMP150 adds cache_enabled= to the call that opens the region
    "torch.autocast(cache_enabled=)": ((1, 10), "torch 1.10.0: torch/autocast_mode.py:131 "
                                       "`__init__(self, device_type, enabled=True, **kwargs)` "
                                       "reads `key == 'cache_enabled'` (a named parameter "
                                       "from 1.11); torch.autocast is absent from 1.9.0"),
    "torch.cuda.amp.autocast(cache_enabled=)": ((1, 10), "torch 1.10.0: torch/cuda/amp/"
                                                "autocast_mode.py:16 `__init__(self, enabled"
                                                "=True, dtype=..., cache_enabled=True)`; 1.9.0's "
                                                "`__init__(self, enabled=True)` lacks it"),
    # Older than torch's AMP: checked to exist in torch 1.0.0 (the floor)
    "torch.nn.functional.binary_cross_entropy_with_logits": (
        (1, 0), "torch 1.0.0: torch/nn/functional.py:2031"),
    "torch.nn.BCEWithLogitsLoss": ((1, 0), "torch 1.0.0: torch/nn/modules/loss.py:508"),
    "torch.finfo": ((1, 0), "torch 1.0.0: type `torch.finfo` in libtorch_python"),
    "torch.device": ((1, 0), "torch 1.0.0: type `torch.device` in libtorch_python"),
    "torch.float16": ((1, 0), "torch 1.0.0: torch/_tensor_str.py:193 reads `torch.float16`"),
    "torch.float32": ((1, 0), "torch 1.0.0: torch/tensor.py:497 reads `torch.float32`"),
    "torch.softmax": ((1, 0), "torch 1.0.0: libtorch_python signature `softmax(Tensor input, "
                      "int64_t dim)`"),
    "torch.softmax(dtype=)": ((1, 0), "torch 1.0.0: libtorch_python signature `softmax(Tensor "
                              "input, int64_t dim, ScalarType dtype)` (keyword-only from 1.1)"),
    "Tensor.new_zeros": ((1, 0), "torch 1.0.0: libtorch_python signature `new_zeros(IntList "
                         "size, *, ScalarType dtype=None, ...)`"),
    "Tensor.new_ones": ((1, 0), "torch 1.0.0: libtorch_python signature `new_ones(...)`"),
    "Tensor.new_empty": ((1, 0), "torch 1.0.0: libtorch_python signature `new_empty(...)`"),
    "Tensor.new_full": ((1, 0), "torch 1.0.0: libtorch_python signature `new_full(...)`"),
    "Tensor.new_tensor": ((1, 0), "torch 1.0.0: libtorch_python signature `new_tensor(...)`"),
    # torch.cuda.amp.GradScaler shipped in 1.5, one release before autocast
    "GradScaler.unscale_": ((1, 5), "torch 1.5.0: torch/cuda/amp/grad_scaler.py:178 `def "
                            "unscale_`; 1.4.0 has no torch/cuda/amp"),
    "GradScaler(enabled=)": ((1, 5), "torch 1.5.0: torch/cuda/amp/grad_scaler.py:91 "
                             "`__init__(..., enabled=True)`; 1.4.0 has no torch/cuda/amp"),
}

# Hazards torch itself fixed: a project whose oldest supported torch has the fix is not told of
# them (a project with no requirement on torch still is: it may run an older one).
# code -> (first release without the hazard, evidence)
FIXED_IN: Dict[str, Tuple[Version, str]] = {
    "AMP150": ((2, 11), "pytorch/pytorch#165068 'Fix autocast cache incorrectly retaining no_grad "
               "state' (fixes #158232; merged 2025-12-10, first released in v2.11.0): cached "
               "casts are made with grad enabled. Lightning's tests/tests_pytorch/plugins/"
               "precision/test_amp.py gates the same behaviour on _TORCH_GREATER_EQUAL_2_11; "
               "tests/test_target_torch.py checks the installed torch"),
}

# The newest release the table knows: a project without a requirement on torch targets it.
NEWEST: Version = (2, 13)
# The oldest target accepted (a lower `target-torch` is an error): the APIs dated 1.0 above
# exist there, so no fix needs a check for them.
OLDEST: Version = (1, 0)


def introduced(name: str) -> Version:
    return INTRODUCED[name][0]


def shown(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class TorchTarget:
    """The oldest torch the project supports, and where that was read. `version` None: the
    newest (no requirement found, or none with a lower bound)."""

    version: Optional[Version] = None
    source: str = ""

    def allows(self, name: str) -> bool:
        return self.version is None or self.version >= introduced(name)

    def has_fix(self, code: str) -> bool:
        """Every torch the project supports has torch's own fix for the hazard `code` names."""
        return self.version is not None and self.version >= FIXED_IN[code][0]

    def why_not(self, name: str, shown_name: Optional[str] = None) -> str:
        """`not fixed: torch.amp.GradScaler needs torch >= 2.3; this project targets 1.8
        (from requirements.txt)`."""
        assert self.version is not None
        where = f" (from {self.source})" if self.source else ""
        return (f"not fixed: {shown_name or name} needs torch >= {shown(introduced(name))}; "
                f"this project targets {shown(self.version)}{where}")
