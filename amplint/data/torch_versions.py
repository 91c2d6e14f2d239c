"""The torch release that introduced each API a fix writes, and the project's target torch.

A fix that writes one of these names checks `TorchTarget.allows(name)` first; below the
release it writes a spelling that works on the target, or offers no fix and says why
(`TorchTarget.why_not(name)`). Keys are the names as a fix writes them (`torch.X`; `Tensor.X`
for methods; `API(keyword=)` for a keyword added later than the API).

Evidence, per entry. "source" means the file was read in pytorch/pytorch at that tag or at
the commit named; "second-hand" means a maintainer's statement or a PR, not the tag's source.
None of the tags could be checked out here (the pytorch snapshot is too big to fetch), so the
entries marked second-hand are the ones to check first with `git show vX.Y.0:PATH`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

Version = Tuple[int, int]

# name -> (first release with it, evidence)
INTRODUCED: Dict[str, Tuple[Version, str]] = {
    # AMP130: torch.amp.autocast lives in torch/amp/autocast_mode.py; torch.autocast (1.10)
    # lived in torch/autocast_mode.py until the torch.amp package took it.
    "torch.amp.autocast": ((1, 12), "second-hand: timm issue #1935 (rwightman: the `.amp` "
                           "namespace is newer than torch.autocast of 1.10; needs >= 1.12); "
                           "pytorch/ignite engine/__init__.py raises 'install torch>=1.12.0' "
                           "on `from torch.amp import autocast`"),
    "torch.amp.GradScaler": ((2, 3), "second-hand: pytorch PR 'Deprecate device-specific "
                             "GradScaler autocast API' (commit b5bf757e) adds "
                             "torch/amp/grad_scaler.py; ignite PR #3460 requires torch>=2.3.1 "
                             "for `from torch.amp import GradScaler`; hivemind issue #610 "
                             "(torch.cuda.amp.grad_scaler moved in 2.3.0)"),
    "torch.amp.custom_fwd": ((2, 4), "second-hand: the follow-up PR of b5bf757e moves "
                             "custom_fwd/custom_bwd to torch/amp/autocast_mode.py with "
                             "device_type (released in 2.4); ComfyUI-GIMM-VFI issue #1: "
                             "\"module 'torch.amp' has no attribute 'custom_fwd'\" on older "
                             "torch"),
    "torch.amp.custom_bwd": ((2, 4), "as torch.amp.custom_fwd (same PR)"),
    # AMP102's fp32 island
    "torch.autocast": ((1, 10), "second-hand: mmengine runner/amp.py docstring ('update it to "
                       "torch.autocast in 1.10.0'); pytorch-pfn-extras _autocast.py "
                       "`requires(\"1.10.0\")`; timm issue #1712 (AttributeError on 1.9.1)"),
    "torch.cuda.amp.autocast": ((1, 6), "second-hand: mmengine runner/amp.py docstring; "
                                "torch.cuda.amp shipped with the 1.6 release (AMP)"),
    # AMP150 adds cache_enabled= to the call that opens the region
    "torch.autocast(cache_enabled=)": ((1, 10), "second-hand: mmengine runner/amp.py passes "
                                       "cache_enabled only on the >= 1.10 path"),
    "torch.cuda.amp.autocast(cache_enabled=)": ((1, 10), "second-hand: composer PR #639 "
                                                "(torch.cuda.amp.autocast < 1.10 takes "
                                                "`enabled` only; docs/1.9.1/amp.html)"),
    # Old APIs: older than any torch with AMP (1.6), so every target has them.
    "torch.nn.functional.binary_cross_entropy_with_logits": ((1, 0), "in torch 1.0 "
                                                             "(torch/nn/functional.py)"),
    "torch.nn.BCEWithLogitsLoss": ((1, 0), "in torch 1.0 (torch/nn/modules/loss.py)"),
    "torch.finfo": ((1, 0), "in torch 1.0 (torch/__init__.py, docs/1.0 type_info.html)"),
    "torch.device": ((1, 0), "in torch 0.4 (docs/0.4.0 tensor_attributes.html)"),
    "torch.softmax": ((1, 0), "unverified (from memory): in torch 1.0's torch namespace"),
    "torch.softmax(dtype=)": ((1, 0), "in torch 1.0 (native_functions.yaml softmax "
                              "with ScalarType dtype)"),
    "Tensor.new_zeros": ((1, 0), "in torch 0.4 (docs/0.4.0 tensors.html)"),
    "Tensor.new_ones": ((1, 0), "in torch 0.4 (docs/0.4.0 tensors.html)"),
    "Tensor.new_empty": ((1, 0), "in torch 0.4 (docs/0.4.0 tensors.html)"),
    "Tensor.new_full": ((1, 0), "in torch 0.4 (docs/0.4.0 tensors.html)"),
    "Tensor.new_tensor": ((1, 0), "in torch 0.4 (docs/0.4.0 tensors.html)"),
    "GradScaler.unscale_": ((1, 6), "the GradScaler API, torch 1.6"),
    "GradScaler(enabled=)": ((1, 6), "the GradScaler API, torch 1.6"),
}

# The newest release the table knows: a project without a requirement on torch targets it.
NEWEST: Version = (2, 13)
# The oldest target accepted: torch.cuda.amp, and so every rule here, starts at 1.6.
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

    def why_not(self, name: str, shown_name: Optional[str] = None) -> str:
        """`not fixed: torch.amp.GradScaler needs torch >= 2.3; this project targets 1.8
        (from requirements.txt)`."""
        assert self.version is not None
        where = f" (from {self.source})" if self.source else ""
        return (f"not fixed: {shown_name or name} needs torch >= {shown(introduced(name))}; "
                f"this project targets {shown(self.version)}{where}")
