import torch


class SimpleTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def run_step(self, data):
        loss = self.model(data)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class AMPTrainer(SimpleTrainer):
    def __init__(self, model, optimizer):
        super().__init__(model, optimizer)
        self.grad_scaler = torch.cuda.amp.GradScaler()

    def run_step(self, data):
        with torch.cuda.amp.autocast():
            loss = self.model(data)
        self.optimizer.zero_grad()
        self.grad_scaler.scale(loss).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
