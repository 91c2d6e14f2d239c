"""Mixed-precision steps of the trainer."""
from .clip import AMPStepper, clip_and_step  # isort:skip
