import torch as th

from .resample import UniformSampler

# bfloat16 on A100s: the fork's "mixed precision" setting
AMP_DTYPE = th.bfloat16


def autocast(enabled=True):
    return th.autocast("cuda", dtype=AMP_DTYPE, enabled=enabled)


class TrainLoop:
    def __init__(self, model, diffusion, data, lr, use_fp16=True):
        self.model = model
        self.diffusion = diffusion
        self.data = data
        self.use_fp16 = use_fp16
        self.schedule_sampler = UniformSampler(diffusion)
        self.opt = th.optim.AdamW(self.model.parameters(), lr=lr)
        self.scaler = th.amp.GradScaler("cuda")

    def run_step(self, batch, cond):
        self.opt.zero_grad()
        t, weights = self.schedule_sampler.sample(batch.shape[0], batch.device)
        with autocast(self.use_fp16):
            losses = self.diffusion.training_losses(self.model, batch, t, model_kwargs=cond)
            loss = (losses["loss"] * weights).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
