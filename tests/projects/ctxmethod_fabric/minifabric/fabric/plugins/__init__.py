from .precision.amp import MixedPrecision
from .precision.precision import Precision
