from contextlib import suppress
from functools import partial

import torch


def get_autocast(precision, device_type="cuda"):
    if precision == "amp":
        return partial(torch.amp.autocast, device_type=device_type)
    elif precision in ("amp_bfloat16", "amp_bf16"):
        return partial(torch.amp.autocast, device_type=device_type, dtype=torch.bfloat16)
    else:
        return suppress


def get_input_dtype(precision):
    input_dtype = None
    if precision in ("bf16", "pure_bf16"):
        input_dtype = torch.bfloat16
    elif precision in ("fp16", "pure_fp16"):
        input_dtype = torch.float16
    return input_dtype
