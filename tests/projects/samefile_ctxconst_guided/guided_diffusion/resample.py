import torch as th


class UniformSampler:
    def __init__(self, diffusion):
        self.num_timesteps = diffusion.num_timesteps

    def sample(self, batch_size, device):
        t = th.randint(0, self.num_timesteps, (batch_size,), device=device)
        return t, th.ones(batch_size, device=device)
