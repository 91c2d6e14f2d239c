from .cross_entropy import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from .binary_cross_entropy import BinaryCrossEntropy
from .jsd import JsdCrossEntropy
