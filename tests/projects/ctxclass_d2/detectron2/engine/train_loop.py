import time

import torch

from ..modeling import mask_rcnn_loss
from ..utils.amp import AutocastContext


class SimpleTrainer:
    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        pred_mask_logits, gt_masks = self.model(data)
        losses = mask_rcnn_loss(pred_mask_logits, gt_masks)
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()


class AMPTrainer(SimpleTrainer):
    def __init__(self, model, data_loader, optimizer, grad_scaler=None, precision=torch.float16):
        super().__init__(model, data_loader, optimizer)
        if grad_scaler is None:
            grad_scaler = torch.amp.GradScaler("cuda")
        self.grad_scaler = grad_scaler
        self.precision = precision

    def run_step(self):
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start
        with AutocastContext(self.precision):
            pred_mask_logits, gt_masks = self.model(data)
            losses = mask_rcnn_loss(pred_mask_logits, gt_masks)
        self.optimizer.zero_grad()
        self.grad_scaler.scale(losses).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        return data_time
