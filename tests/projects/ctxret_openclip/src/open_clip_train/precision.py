from contextlib import nullcontext

import torch


def get_autocast(precision, device_type="cuda"):
    if precision == "amp":
        return torch.amp.autocast(device_type=device_type, dtype=torch.float16)
    elif precision == "amp_bf16":
        return torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)
    return nullcontext()


def get_input_dtype(precision):
    input_dtype = None
    if precision in ("bf16", "pure_bf16"):
        input_dtype = torch.bfloat16
    elif precision in ("fp16", "pure_fp16"):
        input_dtype = torch.float16
    return input_dtype
