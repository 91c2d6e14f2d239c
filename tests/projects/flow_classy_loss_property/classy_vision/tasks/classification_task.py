import torch

from classy_vision.losses import build_loss


class ClassificationTask:
    def __init__(self):
        self.base_model = None
        self.optimizer = None
        self._loss = None
        self.amp_enabled = True

    def set_loss(self, loss):
        self._loss = loss
        return self

    def set_model(self, model):
        self.base_model = model
        return self

    @property
    def loss(self):
        return self._loss

    @property
    def model(self):
        return self.base_model

    @classmethod
    def from_config(cls, config):
        loss = build_loss(config["loss"])
        task = cls()
        task.set_loss(loss)
        return task

    def train_step(self, sample):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.amp_enabled):
            output = self.model(sample["input"])
            local_loss = self.loss(output, sample["target"])
        self.optimizer.zero_grad()
        local_loss.backward()
        self.optimizer.step()
        return local_loss.item()
