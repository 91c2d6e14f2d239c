import torch


class Learner:
    def __init__(self, dls, model, loss_func=None, opt_func=torch.optim.Adam, lr=1e-3, fp16=False):
        self.dls, self.model, self.loss_func = dls, model, loss_func
        self.opt_func, self.lr = opt_func, lr
        self.fp16 = fp16
        self.scaler = torch.amp.GradScaler("cuda", enabled=fp16)

    def _do_one_batch(self):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
            self.pred = self.model(*self.xb)
            self.loss = self.loss_func(self.pred, *self.yb)
        self.scaler.scale(self.loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        self.opt.zero_grad()

    def fit(self, n_epoch):
        self.opt = self.opt_func(self.model.parameters(), lr=self.lr)
        for epoch in range(n_epoch):
            for b in self.dls:
                self.xb, self.yb = b[:1], b[1:]
                self._do_one_batch()
