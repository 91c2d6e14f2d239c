from .gaussian_diffusion import GaussianDiffusion


def create_diffusion(diffusion_steps=1000, learn_sigma=True):
    return GaussianDiffusion(diffusion_steps, learn_sigma=learn_sigma)
