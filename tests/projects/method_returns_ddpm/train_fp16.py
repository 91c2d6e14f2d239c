import torch
import torch.nn.functional as F

from denoising_diffusion_pytorch.unet import Unet


class ModelLoader:
    def __init__(self, dim=64):
        self.dim = dim

    def load(self, ckpt=None):
        model = Unet(dim=self.dim)
        if ckpt is not None:
            model.load_state_dict(torch.load(ckpt, map_location="cpu"))
        return model.half()


def train(loader, ckpt=None):
    model = ModelLoader().load(ckpt)
    opt = torch.optim.Adam(model.parameters(), lr=8e-5, eps=1e-8)
    for images in loader:
        noise = torch.randn_like(images)
        loss = F.mse_loss(model(images + noise), noise)
        loss.backward()
        opt.step()
        opt.zero_grad()
