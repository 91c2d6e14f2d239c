import torch
import torch.nn as nn


class BaseModel(nn.Module):
    """Base class for models."""

    @property
    def device(self):
        return list(self.parameters())[0].device

    def maybe_autocast(self, dtype=torch.bfloat16):
        return torch.autocast("cuda", dtype=dtype)
