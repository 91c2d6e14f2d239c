from .gaussian_diffusion import GaussianDiffusion
from .unet import UNetModel


def create_model_and_diffusion(num_channels=64, context_dim=32, diffusion_steps=1000):
    model = UNetModel(model_channels=num_channels, context_dim=context_dim)
    diffusion = GaussianDiffusion(betas=[1.0 / diffusion_steps] * diffusion_steps)
    return model, diffusion
