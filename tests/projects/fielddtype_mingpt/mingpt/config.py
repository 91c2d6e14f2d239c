"""The trainer's settings, kept in a dataclass by the fork (upstream: a CfgNode)."""
from dataclasses import dataclass

import torch


@dataclass
class TrainerConfig:
    device: str = "cuda"
    max_iters: int = 10
    batch_size: int = 4
    learning_rate: float = 3e-4
    grad_norm_clip: float = 1.0
    # bfloat16 on A100s
    amp_dtype: torch.dtype = torch.bfloat16
