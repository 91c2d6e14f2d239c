import torch

from speechbrain.utils.autocast import TorchAutocast


class Brain:
    def __init__(self, modules, opt_class, hparams, run_opts):
        self.modules = torch.nn.ModuleDict(modules)
        self.hparams = hparams
        self.device = run_opts.get("device", "cuda")
        self.use_amp = run_opts.get("precision", "fp32") != "fp32"
        self.optimizer = opt_class(self.modules.parameters())
        self.amp_dtype = torch.bfloat16
        self.training_ctx = TorchAutocast(self.use_amp, device_type="cuda", dtype=self.amp_dtype)
        self.scaler = None
        if self.use_amp:
            self.scaler = torch.amp.GradScaler("cuda")

    def compute_forward(self, batch):
        raise NotImplementedError

    def compute_objectives(self, predictions, batch):
        raise NotImplementedError

    def fit_batch(self, batch):
        with self.training_ctx:
            outputs = self.compute_forward(batch)
            loss = self.compute_objectives(outputs, batch)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.modules.parameters(), 5.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()

    def fit(self, epoch_counter, train_set):
        for epoch in epoch_counter:
            for batch in train_set:
                self.fit_batch(batch)
