import functools
import time
from collections import defaultdict

import torch

TIMINGS = defaultdict(float)


def timed(section):
    """Add the wall time of every call of the decorated function to TIMINGS[section]."""
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            TIMINGS[section] += time.perf_counter() - start
            return out
        return wrapper
    return decorator
