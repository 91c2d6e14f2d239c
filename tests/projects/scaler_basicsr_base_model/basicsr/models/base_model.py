import torch


class BaseModel:
    """Base model: networks, optimizers and the AMP step shared by every model."""

    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda" if opt["num_gpu"] != 0 else "cpu")
        self.is_train = opt["is_train"]
        self.optimizers = []
        self.use_amp = opt.get("use_amp", False)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.use_amp)

    def get_optimizer(self, optim_type, params, lr, **kwargs):
        if optim_type == "Adam":
            return torch.optim.Adam(params, lr, **kwargs)
        raise NotImplementedError(f"optimizer {optim_type} is not supported yet.")

    def optimizer_step(self, optimizer):
        """Steps one optimizer through the scaler; the model updates the scale once per iteration."""
        self.scaler.step(optimizer)
        optimizer.zero_grad()

    def update_learning_rate(self, current_iter, warmup_iter=-1):
        for scheduler in self.schedulers:
            scheduler.step()
