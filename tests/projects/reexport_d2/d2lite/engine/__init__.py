from .amp import AMPStepper, clip_and_step
from .launch import launch

__all__ = [k for k in globals().keys() if not k.startswith("_")]
