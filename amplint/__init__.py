"""amplint: find and fix PyTorch mixed-precision (AMP) hazards before they run."""

__version__ = "0.1.0"
