import torch


class _FabricModule(torch.nn.Module):
    def __init__(self, forward_module, precision):
        super().__init__()
        self._forward_module = forward_module
        self._precision = precision

    def forward(self, *args, **kwargs):
        with self._precision.forward_context():
            output = self._forward_module(*args, **kwargs)
        return output
