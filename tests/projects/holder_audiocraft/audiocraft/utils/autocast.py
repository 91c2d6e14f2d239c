import torch


class TorchAutocast:
    """An autocast context that a flag can switch off (enabled=False: a plain no-op)."""

    def __init__(self, enabled: bool, *args, **kwargs):
        self.autocast = torch.autocast(*args, **kwargs) if enabled else None

    def __enter__(self):
        if self.autocast is None:
            return
        try:
            self.autocast.__enter__()
        except RuntimeError:
            raise RuntimeError(f"autocast failed on {self.autocast.device} with {self.autocast.fast_dtype}")

    def __exit__(self, *args, **kwargs):
        if self.autocast is None:
            return
        self.autocast.__exit__(*args, **kwargs)
