from dataclasses import dataclass, field

from torch import nn

from .losses import SoftBCE
from .models import PooledClassifier


@dataclass
class TrainingConfig:
    lr: float = 2e-5
    num_epochs: int = 3
    batch_size: int = 16
    mixed_precision: str = "fp16"
    model_cls: type = PooledClassifier
    criterion: nn.Module = field(default_factory=SoftBCE)
