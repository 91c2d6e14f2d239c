"""The torch release that introduced each API a fix writes, and the project's target torch.

A fix that writes one of these names checks `TorchTarget.allows(name)` first; below the
release it writes a spelling that works on the target, or offers no fix and says why
(`TorchTarget.why_not(name)`). Keys are the names as a fix writes them (`torch.X`; `Tensor.X`
for methods; `API(keyword=)` for a keyword added later than the API).

Evidence, per entry. None could be checked against its tag's own source here: the
pytorch/pytorch snapshot is too big to fetch, and the search index holds no tagged versions.
"second-hand" names the PR, issue or maintainer's statement the version comes from;
"unverified" marks APIs older than torch's AMP, from memory. Check them with
`git show vX.Y.0:PATH` before relying on a boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

Version = Tuple[int, int]

# name -> (first release with it, evidence)
INTRODUCED: Dict[str, Tuple[Version, str]] = {
    # AMP130. torch.autocast (1.10) lived in torch/autocast_mode.py before the torch.amp
    # package took it.
    "torch.amp.autocast": ((1, 12), "second-hand: timm issue #1935 (maintainer: `torch.amp` "
                           "needs torch >= 1.12; torch.autocast itself is 1.10); "
                           "pytorch/ignite raises 'install torch>=1.12.0' on `from torch.amp "
                           "import autocast`. A DeepSpeed reviewer (PR #5811) says 1.11: the "
                           "later of the two is kept, so a 1.11 target only loses a fix"),
    "torch.amp.GradScaler": ((2, 3), "second-hand: torch/amp/grad_scaler.py is in 2.3.0 "
                             "(hivemind issue #610: torch.cuda.amp.grad_scaler's internals "
                             "moved there in 2.3.0); pytorch/ignite PR #3460 requires "
                             "torch>=2.3.1 for `from torch.amp import GradScaler`; the CUDA "
                             "class was deprecated later, in 2.4 (pytorch PR #126527)"),
    "torch.amp.custom_fwd": ((2, 4), "second-hand: pytorch PR #126531 (merged 2024-05-25, "
                             "first released in 2.4) moves custom_fwd/custom_bwd into "
                             "torch/amp/autocast_mode.py with device_type; DeepSpeed PR #7920: "
                             "'torch.amp.custom_fwd was introduced in PyTorch 2.4'"),
    "torch.amp.custom_bwd": ((2, 4), "as torch.amp.custom_fwd (the same PR #126531)"),
    # AMP102's fp32 island
    "torch.autocast": ((1, 10), "second-hand: mmengine runner/amp.py docstring ('update it to "
                       "torch.autocast in 1.10.0'); pytorch-pfn-extras _autocast.py "
                       "`requires(\"1.10.0\")`; timm issue #1712 (AttributeError on 1.9.1)"),
    "torch.cuda.amp.autocast": ((1, 6), "second-hand: mmengine runner/amp.py docstring "
                                "('Pytorch 1.5.0 provide torch.cuda.amp.autocast'; AMP was "
                                "released with 1.6, PR #26512 for the scaler)"),
    # AMP150 adds cache_enabled= to the call that opens the region
    "torch.autocast(cache_enabled=)": ((1, 10), "second-hand: mmengine runner/amp.py passes "
                                       "cache_enabled only on its >= 1.10 path"),
    "torch.cuda.amp.autocast(cache_enabled=)": ((1, 10), "second-hand: composer PR #639 "
                                                "(torch.cuda.amp.autocast before 1.10 takes "
                                                "`enabled` only; docs/1.9.1/amp.html)"),
    # Older than torch's AMP (1.6), so every target with autocast has them. Not checked
    # against a tag here: unverified, from memory.
    "torch.nn.functional.binary_cross_entropy_with_logits": ((1, 0), "unverified: torch 1.0"),
    "torch.nn.BCEWithLogitsLoss": ((1, 0), "unverified: torch 1.0"),
    "torch.finfo": ((1, 0), "unverified: torch 1.0 (torch.finfo / type_info)"),
    "torch.device": ((1, 0), "unverified: torch 0.4"),
    "torch.softmax": ((1, 0), "unverified: torch 1.0"),
    "torch.softmax(dtype=)": ((1, 0), "unverified: torch 1.0"),
    "Tensor.new_zeros": ((1, 0), "unverified: torch 0.4"),
    "Tensor.new_ones": ((1, 0), "unverified: torch 0.4"),
    "Tensor.new_empty": ((1, 0), "unverified: torch 0.4"),
    "Tensor.new_full": ((1, 0), "unverified: torch 0.4"),
    "Tensor.new_tensor": ((1, 0), "unverified: torch 0.4"),
    "GradScaler.unscale_": ((1, 6), "the GradScaler API of torch 1.6 (pytorch PR #26512)"),
    "GradScaler(enabled=)": ((1, 6), "the GradScaler API of torch 1.6 (pytorch PR #26512)"),
}

# The newest release the table knows: a project without a requirement on torch targets it.
NEWEST: Version = (2, 13)
# The oldest target accepted (a lower `target-torch` is an error): the "unverified" APIs
# above date from it, so no check is needed for them.
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
