from contextlib import nullcontext

import torch


def get_amp_context(args):
    if not (args.bf16 or args.fp16):
        return nullcontext()
    dtype = torch.bfloat16 if args.bf16 else torch.float16
    return torch.autocast("cuda", dtype=dtype)
