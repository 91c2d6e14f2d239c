import torch
from torch import nn
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


class SSLMetaArch(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.fp16_scaler = ShardedGradScaler() if cfg.compute_precision.grad_scaler else None
        self.student = nn.ModuleDict({"backbone": nn.Linear(16, 16)})
        self.teacher = nn.ModuleDict({"backbone": nn.Linear(16, 16)})

    def backprop_loss(self, loss):
        if self.fp16_scaler is not None:
            self.fp16_scaler.scale(loss).backward()
        else:
            loss.backward()

    def forward_backward(self, images, teacher_temp):
        crops = images["collated_global_crops"].cuda(non_blocking=True)
        with torch.no_grad():
            target = self.teacher["backbone"](crops).softmax(-1) / teacher_temp
        loss = -(target * self.student["backbone"](crops).log_softmax(-1)).sum(-1).mean()
        self.backprop_loss(loss)
        return {"dino_loss": loss.detach()}
