import torch

from detectron2.engine.train_loop import AMPTrainer


class BF16AMPTrainer(AMPTrainer):
    """ViTDet's large backbones train in bfloat16 on A100s."""

    precision = torch.bfloat16

    def __init__(self, model, data_loader, optimizer, log_period=20):
        super().__init__(model, data_loader, optimizer, log_period=log_period)
        self.backbone_frozen_stages = 0
