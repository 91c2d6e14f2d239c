import contextlib

import torch
import torch.nn as nn


class BaseModel(nn.Module):
    @property
    def device(self):
        return list(self.parameters())[-1].device

    def load_checkpoint(self, filename):
        checkpoint = torch.load(filename, map_location="cpu")
        return self.load_state_dict(checkpoint["model"], strict=False)

    def maybe_autocast(self, dtype=torch.float16):
        # if on cpu, don't use autocast; if on gpu, use autocast with dtype if provided, otherwise use torch.float16
        enable_autocast = self.device != torch.device("cpu")
        if enable_autocast:
            return torch.autocast("cuda", dtype=dtype)
        return contextlib.nullcontext()
