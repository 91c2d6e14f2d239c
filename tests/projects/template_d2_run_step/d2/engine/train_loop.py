import torch


class TrainerBase:
    """Owns the optimizer and the GradScaler; subclasses implement one iteration in run_step."""

    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")
        self.iter = 0

    def run_step(self):
        raise NotImplementedError

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.optimizer.zero_grad()
            self.run_step()
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()
