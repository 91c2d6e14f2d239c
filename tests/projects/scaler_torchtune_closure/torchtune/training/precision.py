import torch

PRECISION_STR_TO_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def get_dtype(name):
    return PRECISION_STR_TO_DTYPE[name or "fp32"]
