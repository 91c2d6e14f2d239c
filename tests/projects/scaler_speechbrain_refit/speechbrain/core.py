import torch


class Stage:
    TRAIN = "train"
    VALID = "valid"


class Brain:
    def __init__(self, modules, opt_class, precision="fp16"):
        self.modules = modules
        self.opt_class = opt_class
        self.optimizer = opt_class(modules.parameters())
        self.scaler = torch.GradScaler("cuda", enabled=precision == "fp16")

    def compute_forward(self, batch, stage):
        return self.modules(batch)

    def fit_batch(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.compute_forward(batch, Stage.TRAIN).mean()
        self.scaler.scale(loss).backward()
        self.optimizers_step()
        return loss.detach()

    def optimizers_step(self):
        valid_optimizers = {"optimizer": self.optimizer}
        for opt in valid_optimizers.values():
            self.scaler.unscale_(opt)
        for opt in valid_optimizers.values():
            torch.nn.utils.clip_grad_norm_(opt.param_groups[0]["params"], 5.0)
        for opt in valid_optimizers.values():
            self.scaler.step(opt)
        self.scaler.update()
        for opt in valid_optimizers.values():
            opt.zero_grad(set_to_none=True)

    def on_stage_start(self, stage, epoch=None):
        pass

    def _fit_train(self, train_set, epoch):
        self.on_stage_start(Stage.TRAIN, epoch)
        self.modules.train()
        for batch in train_set:
            self.fit_batch(batch)

    def fit(self, epoch_counter, train_set):
        for epoch in epoch_counter:
            self._fit_train(train_set, epoch)
