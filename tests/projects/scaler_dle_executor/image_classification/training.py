import torch

from image_classification.executor import Executor


class Trainer:
    def __init__(self, executor: Executor, optimizer, grad_acc_steps: int):
        self.executor = executor
        self.optimizer = optimizer
        self.grad_acc_steps = grad_acc_steps
        self.steps_since_update = 0

    def train_step(self, input, target):
        loss, output = self.executor.forward_backward(input, target)
        self.steps_since_update += 1
        if self.steps_since_update == self.grad_acc_steps:
            if self.executor.scaler is not None:
                self.executor.scaler.step(self.optimizer)
                self.executor.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
            self.steps_since_update = 0
        torch.cuda.synchronize()
        return loss


def train_loop(trainer, train_loader, epochs):
    for epoch in range(epochs):
        for input, target in train_loader:
            trainer.train_step(input.cuda(), target.cuda())
