import torch

from denoising_diffusion_pytorch.trainer import DistUtils


class Sampler:
    def __init__(self, model, image_size=32):
        self.model = model
        self.image_size = image_size

    @torch.no_grad()
    def ddim_sample(self, batch_size=16):
        img = torch.randn(batch_size, 3, self.image_size, self.image_size)
        with torch.autocast(DistUtils.local_device(), dtype=torch.bfloat16):
            return self.model(img)
