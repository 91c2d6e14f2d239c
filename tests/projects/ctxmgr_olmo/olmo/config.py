from dataclasses import dataclass

import torch


@dataclass
class TrainConfig:
    d_model: int = 768
    n_layers: int = 12
    vocab_size: int = 50304
    precision: str = "amp_bf16"
    microbatch_size: int = 4
    max_steps: int = 1000

    @property
    def autocast_precision(self) -> torch.dtype:
        if self.precision == "amp_bf16":
            return torch.bfloat16
        if self.precision == "amp_fp16":
            return torch.float16
        return torch.float32
