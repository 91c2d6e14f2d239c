import numpy as np
import torch as th


class GaussianDiffusion:
    def __init__(self, *, betas):
        self.betas = np.array(betas, dtype=np.float64)
        self.num_timesteps = int(self.betas.shape[0])

    def p_sample_loop(self, model, shape, model_kwargs=None):
        img = th.randn(*shape)
        for i in reversed(range(self.num_timesteps)):
            t = th.tensor([i] * shape[0])
            with th.no_grad():
                img = img - model(img, t, **(model_kwargs or {}))
        return img
