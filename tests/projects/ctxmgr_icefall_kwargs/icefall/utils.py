import warnings
from contextlib import contextmanager

import torch
from packaging import version

TORCH_VERSION = version.parse(torch.__version__)


@contextmanager
def torch_autocast(device_type="cuda", **kwargs):
    """One autocast for old and new torch; the keywords go to the autocast as they are."""
    if TORCH_VERSION >= version.parse("2.3.0"):
        with torch.amp.autocast(device_type=device_type, **kwargs):
            yield
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=FutureWarning)
            with torch.cuda.amp.autocast(**kwargs):
                yield
