import time

import torch


def profile(input, ops, n=3, device=None):
    """Forward time of each op on each input, the op matched to the input's dtype."""
    results = []
    for x in input if isinstance(input, list) else [input]:
        x = x.to(device)
        for m in ops if isinstance(ops, list) else [ops]:
            m = m.to(device) if hasattr(m, "to") else m
            m = m.half() if hasattr(m, "half") and isinstance(x, torch.Tensor) and x.dtype is torch.float16 else m
            start = time.time()
            for _ in range(n):
                m(x)
            results.append((time.time() - start) / n)
    return results
