from .plugins import MixedPrecision
from .wrappers import _FabricModule


class Engine:
    def __init__(self, precision="16-mixed", accelerator="cuda"):
        self._precision = MixedPrecision(precision, accelerator)

    def setup(self, module):
        return _FabricModule(module, self._precision)

    def backward(self, tensor, model=None):
        self._precision.backward(tensor, model)
