import torch


class SimpleTrainer:
    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.run_step()


class AMPTrainer(SimpleTrainer):
    def __init__(self, model, data_loader, optimizer, precision=torch.float16):
        super().__init__(model, data_loader, optimizer)
        self.grad_scaler = torch.amp.GradScaler("cuda")
        self.precision = precision

    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda", dtype=self.precision):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        self.grad_scaler.scale(losses).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
