import torch


class AutocastContext:
    """Enters torch.autocast for the trainer's precision (float16 unless told otherwise)."""

    def __init__(self, precision=torch.float16, device_type="cuda"):
        self._autocast = torch.autocast(device_type, dtype=precision)

    def __enter__(self):
        self._autocast.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        return self._autocast.__exit__(exc_type, exc, tb)


def is_amp_enabled(precision):
    return precision in (torch.float16, torch.bfloat16)
