"""Core SpeechBrain code for running experiments (the Brain class)."""
import torch


class Stage:
    TRAIN = "train"
    VALID = "valid"


class Brain:
    def __init__(self, modules=None, opt_class=None, hparams=None, run_opts=None):
        self.modules = torch.nn.ModuleDict(modules)
        self.hparams = hparams
        self.device = (run_opts or {}).get("device", "cuda")
        self.precision = (run_opts or {}).get("precision", "fp16")
        self.optimizer = opt_class(self.modules.parameters())
        self.scaler = torch.amp.GradScaler(self.device, enabled=self.precision == "fp16")
        self.max_grad_norm = 5.0

    @property
    def training_ctx(self):
        return torch.autocast(self.device, dtype=torch.float16, enabled=self.precision == "fp16")

    def optimizers_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.modules.parameters(), self.max_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)

    def fit_batch(self, batch):
        with self.training_ctx:
            outputs = self.compute_forward(batch, Stage.TRAIN)
            loss = self.compute_objectives(outputs, batch, Stage.TRAIN)
        self.scaler.scale(loss).backward()
        self.optimizers_step()
        return loss.detach().cpu()

    def fit(self, epoch_counter, train_set):
        for epoch in epoch_counter:
            for batch in train_set:
                self.fit_batch(batch)
