from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Config:
    name: str = "tiny"
    block_size: int = 1024
    vocab_size: int = 32000
    n_layer: int = 4
    n_embd: int = 512
    norm_class_name: str = "LayerNorm"
    norm_eps: float = 1e-5

    @classmethod
    def from_name(cls, name: str, **kwargs: Any) -> "Config":
        settings = dict(name_to_config[name], **kwargs)
        return cls(**settings)

    @property
    def norm_class(self):
        if self.norm_class_name == "RMSNorm":
            from functools import partial

            from litgpt.model import RMSNorm

            return partial(RMSNorm, add_unit_offset="gemma" in self.name)
        return getattr(torch.nn, self.norm_class_name)


name_to_config = {
    "tiny": dict(name="tiny"),
    "tiny-llama": dict(name="tiny-llama", norm_class_name="RMSNorm", norm_eps=1e-6),
}
