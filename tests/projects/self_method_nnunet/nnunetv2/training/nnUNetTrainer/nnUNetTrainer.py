import torch
from torch import autocast, nn

from nnunetv2.training.loss.compound_losses import DC_and_BCE_loss
from nnunetv2.training.loss.deep_supervision import DeepSupervisionWrapper


class nnUNetTrainer:
    def __init__(self, plans, device=torch.device("cuda")):
        self.plans = plans
        self.device = device
        self.grad_scaler = torch.amp.GradScaler("cuda") if device.type == "cuda" else None
        self.num_epochs = 1000

    def build_network_architecture(self):
        return nn.Conv3d(1, self.plans["num_regions"], 3, padding=1)

    def _get_deep_supervision_scales(self):
        return [1.0, 0.5, 0.25]

    def _build_loss(self):
        loss = DC_and_BCE_loss({}, {"smooth": 1e-5})
        weights = [1 / (2 ** i) for i in range(len(self._get_deep_supervision_scales()))]
        return DeepSupervisionWrapper(loss, weights)

    def on_train_start(self):
        self.network = self.build_network_architecture().to(self.device)
        self.optimizer = torch.optim.SGD(self.network.parameters(), 1e-2, momentum=0.99, nesterov=True)
        self.loss = self._build_loss()

    def train_step(self, batch):
        data = batch["data"].to(self.device, non_blocking=True)
        target = [t.to(self.device, non_blocking=True) for t in batch["target"]]
        self.optimizer.zero_grad(set_to_none=True)
        with autocast(self.device.type, enabled=True):
            output = [self.network(data)]
            loss = self.loss(output, target)
        self.grad_scaler.scale(loss).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        return loss.detach()

    def run_training(self, dataloader):
        self.on_train_start()
        for _ in range(self.num_epochs):
            for batch in dataloader:
                self.train_step(batch)
