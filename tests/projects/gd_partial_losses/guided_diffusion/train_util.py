import functools

import torch as th
from torch.nn.parallel.distributed import DistributedDataParallel as DDP


class TrainLoop:
    def __init__(self, *, model, diffusion, data, batch_size, microbatch, lr):
        self.model = model
        self.diffusion = diffusion
        self.data = data
        self.batch_size = batch_size
        self.microbatch = microbatch if microbatch > 0 else batch_size
        self.opt = th.optim.AdamW(self.model.parameters(), lr=lr)
        self.scaler = th.amp.GradScaler("cuda")
        self.ddp_model = DDP(self.model, device_ids=[0])

    def run_loop(self):
        for batch, cond in self.data:
            self.forward_backward(batch, cond)

    def forward_backward(self, batch, cond):
        self.opt.zero_grad()
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i: i + self.microbatch].cuda()
            micro_cond = {k: v[i: i + self.microbatch].cuda() for k, v in cond.items()}
            t = th.randint(0, 1000, (micro.shape[0],), device=micro.device)
            compute_losses = functools.partial(
                self.diffusion.training_losses,
                self.ddp_model,
                micro,
                t,
                model_kwargs=micro_cond,
            )
            with th.autocast("cuda", dtype=th.float16):
                losses = compute_losses()
            self.scaler.scale(losses["mse"].mean()).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
