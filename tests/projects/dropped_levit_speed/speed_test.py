import time

import torch

from levit.model import LeViT


def compute_throughput(model, batch_size, resolution, use_fp16, runs=30):
    inputs = torch.randn(batch_size, 3, resolution, resolution, device="cuda")
    if use_fp16:
        inputs = inputs.half()
    with torch.autocast("cuda", enabled=use_fp16):
        with torch.no_grad():
            start = time.time()
            for _ in range(runs):
                model(inputs)
            torch.cuda.synchronize()
    return batch_size * runs / (time.time() - start)


def dtype_round_trip(model, images):
    model = model.half()
    with torch.autocast("cuda", dtype=torch.float16):
        _ = model(images)
    model = model.float()
    return model


def main():
    model = LeViT().cuda().eval()
    print(compute_throughput(model, 64, 224, True))
    dtype_round_trip(model, torch.randn(2, 3, 224, 224, device="cuda"))
