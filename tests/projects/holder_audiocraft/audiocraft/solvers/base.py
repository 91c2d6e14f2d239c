import torch


class StandardSolver:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = cfg.device
        self.build_model()

    def build_model(self):
        raise NotImplementedError

    def run_step(self, idx, batch, metrics):
        raise NotImplementedError

    def run_epoch(self, loader):
        metrics = {}
        for idx, batch in enumerate(loader):
            metrics = self.run_step(idx, batch, metrics)
        return metrics

    def run(self, loader):
        for epoch in range(self.cfg.epochs):
            print(epoch, self.run_epoch(loader))
            torch.save(self.model.state_dict(), "checkpoint.th")
