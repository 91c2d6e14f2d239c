"""The same phases as methods of a trainer class (one file): the loop unpacks each phase's
module and optimizer and hands them to `_step_phase`."""

import torch


class GANTrainer:
    def __init__(self, G, D, loss_fn):
        self.loss_fn = loss_fn
        self.scaler = torch.amp.GradScaler("cuda")
        self.phases = [
            ("G", G, torch.optim.Adam(G.parameters())),
            ("D", D, torch.optim.Adam(D.parameters())),
        ]

    def _step_phase(self, name, module, opt, batch):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.loss_fn(name, module, batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(opt)

    def train(self, loader):
        for batch in loader:
            for name, module, opt in self.phases:
                self._step_phase(name, module, opt, batch)
            self.scaler.update()
