import torch


class TorchAutocast:
    """An autocast context that can be switched off: `with TorchAutocast(enabled, ...):`."""

    def __init__(self, enabled: bool, *args, **kwargs):
        self.autocast = torch.autocast(*args, **kwargs) if enabled else None

    def __enter__(self):
        if self.autocast is not None:
            self.autocast.__enter__()
        return self

    def __exit__(self, *args):
        if self.autocast is not None:
            return self.autocast.__exit__(*args)
        return False
