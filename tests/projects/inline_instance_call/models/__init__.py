from .perceiver import PerceiverPooler
