import numpy as np

from .gaussian_diffusion import GaussianDiffusion
from .unet import UNetModel


def model_and_diffusion_defaults():
    return dict(image_size=64, num_channels=128, num_res_blocks=2, num_heads=4,
                diffusion_steps=1000, use_fp16=False)


def create_model_and_diffusion(image_size, num_channels, num_res_blocks, num_heads, diffusion_steps, use_fp16):
    model = create_model(image_size, num_channels, num_res_blocks, num_heads=num_heads, use_fp16=use_fp16)
    diffusion = create_gaussian_diffusion(steps=diffusion_steps)
    return model, diffusion


def create_model(image_size, num_channels, num_res_blocks, num_heads=1, use_fp16=False):
    channel_mult = (1, 2, 3, 4) if image_size == 64 else (1, 1, 2, 2, 4, 4)
    return UNetModel(
        in_channels=3,
        model_channels=num_channels,
        out_channels=6,
        num_res_blocks=num_res_blocks,
        channel_mult=channel_mult,
        use_fp16=use_fp16,
        num_heads=num_heads,
    )


def create_gaussian_diffusion(steps=1000):
    return GaussianDiffusion(betas=np.linspace(1e-4, 0.02, steps))
