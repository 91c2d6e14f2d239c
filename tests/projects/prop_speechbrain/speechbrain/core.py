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

    @property
    def training_ctx(self):
        return torch.autocast(self.device, dtype=torch.float16, enabled=self.precision == "fp16")

    def compute_forward(self, batch, stage):
        raise NotImplementedError

    def compute_objectives(self, predictions, batch, stage):
        raise NotImplementedError

    def fit_batch(self, batch):
        with self.training_ctx:
            outputs = self.compute_forward(batch, Stage.TRAIN)
            loss = self.compute_objectives(outputs, batch, Stage.TRAIN)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.detach().cpu()

    def fit(self, epoch_counter, train_set):
        for epoch in epoch_counter:
            for batch in train_set:
                self.fit_batch(batch)
