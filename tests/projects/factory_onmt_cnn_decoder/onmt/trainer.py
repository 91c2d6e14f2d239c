import torch

from onmt.model_builder import build_model


class Trainer(object):
    def __init__(self, opt, optim):
        self.model = build_model(opt)
        self.optim = optim
        self.amp = opt.amp

    def train_step(self, src, tgt, loss_fn):
        with torch.autocast("cuda", enabled=self.amp):
            out = self.model(src, tgt)
            loss = loss_fn(out, tgt)
        loss.backward()
        self.optim.step()
