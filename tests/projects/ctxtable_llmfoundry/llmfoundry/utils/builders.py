from functools import partial

import torch

OPTIMIZERS = {"decoupled_adamw": torch.optim.AdamW, "adamw": torch.optim.AdamW}

# the precision names of the YAML -> the context each micro-batch's forward runs in
_PRECISION_CONTEXTS = {
    "amp_bf16": partial(torch.autocast, "cuda", dtype=torch.bfloat16),
}


def build_precision_context(precision):
    if precision not in _PRECISION_CONTEXTS:
        raise ValueError(f"precision {precision!r} is not supported")
    return _PRECISION_CONTEXTS[precision]


def build_optimizer(model, name, optimizer_config):
    return OPTIMIZERS[name](model.parameters(), **optimizer_config)
