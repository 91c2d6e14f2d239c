import functools
import glob
import os

from torch.nn.utils import clip_grad_norm_


def init_weights(m, mean=0.0, std=0.01):
    if m.__class__.__name__.find("Conv") != -1:
        m.weight.data.normal_(mean, std)


def get_padding(kernel_size, dilation=1):
    return int((kernel_size * dilation - dilation) / 2)


def scan_checkpoint(cp_dir, prefix):
    pattern = os.path.join(cp_dir, prefix + "????????")
    cp_list = glob.glob(pattern)
    return sorted(cp_list)[-1] if cp_list else None


def grad_clipper(h):
    """The generator's gradient clipping, its threshold from the config."""
    return functools.partial(clip_grad_norm_, max_norm=h.grad_clip)
