import torch as th


def mean_flat(tensor):
    return tensor.mean(dim=list(range(1, len(tensor.shape))))


class GaussianDiffusion:
    def __init__(self, *, betas):
        self.betas = betas

    def q_sample(self, x_start, t, noise=None):
        return x_start + (th.randn_like(x_start) if noise is None else noise)

    def training_losses(self, model, x_start, t, model_kwargs=None, noise=None):
        if model_kwargs is None:
            model_kwargs = {}
        noise = th.randn_like(x_start) if noise is None else noise
        x_t = self.q_sample(x_start, t, noise=noise)
        model_output = model(x_t, t, **model_kwargs)
        return {"mse": mean_flat((noise - model_output) ** 2)}
