import torch


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda:0")
        self.optimizers = []
        self.schedulers = []

    def set_input(self, data):
        self.real_A = data["A"].to(self.device)
        self.real_B = data["B"].to(self.device)

    def setup(self, opt):
        self.schedulers = [torch.optim.lr_scheduler.StepLR(o, step_size=50) for o in self.optimizers]

    def update_learning_rate(self):
        for scheduler in self.schedulers:
            scheduler.step()

    def set_requires_grad(self, nets, requires_grad=False):
        for net in nets if isinstance(nets, list) else [nets]:
            for param in net.parameters():
                param.requires_grad = requires_grad
