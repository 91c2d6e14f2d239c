import torch
import torch.nn.functional as F


class GaussianDiffusion:
    def __init__(self, num_timesteps, learn_sigma=True):
        self.num_timesteps = num_timesteps
        self.learn_sigma = learn_sigma
        betas = torch.linspace(1e-4, 0.02, num_timesteps, dtype=torch.float64)
        self.sqrt_alphas_cumprod = torch.cumprod(1 - betas, 0).sqrt().float()

    def training_losses(self, model, x_start, t):
        noise = torch.randn_like(x_start)
        a = self.sqrt_alphas_cumprod.to(x_start.device)[t].view(-1, 1, 1)
        model_output = model(a * x_start + (1 - a) * noise, t)
        if self.learn_sigma:
            model_output, _ = model_output.chunk(2, dim=-1)
        return {"loss": F.mse_loss(model_output.float(), noise)}
