"""The Brain class: the training loop every recipe subclasses."""
import torch


class Brain:
    def __init__(self, modules, opt_class, hparams, run_opts=None):
        run_opts = run_opts or {}
        self.modules = torch.nn.ModuleDict(modules)
        self.hparams = hparams
        self.device = run_opts.get("device", "cuda")
        self.optimizer = opt_class(self.modules.parameters())
        self.autocast = torch.autocast("cuda", dtype=torch.float16)
        self.scaler = torch.amp.GradScaler("cuda")
        self.step = 0

    def compute_forward(self, batch, stage):
        raise NotImplementedError

    def fit_batch(self, batch):
        raise NotImplementedError

    def fit(self, epochs, train_set):
        for epoch in range(epochs):
            for batch in train_set:
                self.step += 1
                loss = self.fit_batch(batch)
                if self.step % 100 == 0:
                    print(f"epoch {epoch} step {self.step} loss {loss:.4f}")
