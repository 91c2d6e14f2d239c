from dataclasses import dataclass, field
from typing import Optional

import torch


@dataclass
class LMTransformerArgs:
    dim: int = 64
    n_layers: int = 2
    vocab_size: int = 128
    # weights in half so that the 7B config fits one card
    weight_dtype: torch.dtype = torch.float16


@dataclass
class OptimArgs:
    lr: float = 3e-4
    weight_decay: float = 0.1
    epsilon: float = 1e-6


@dataclass
class TrainArgs:
    name: str = "debug"
    steps: int = 1000
    seed: int = 0
    dump_dir: Optional[str] = None
    model: LMTransformerArgs = field(default_factory=LMTransformerArgs)
    optim: OptimArgs = field(default_factory=OptimArgs)
