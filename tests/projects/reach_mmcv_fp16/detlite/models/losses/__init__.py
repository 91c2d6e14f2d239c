from .bce import SigmoidBCELoss
