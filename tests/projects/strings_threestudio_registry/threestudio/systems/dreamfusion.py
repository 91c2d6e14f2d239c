import torch.nn.functional as F

import threestudio
from threestudio.systems.base import BaseSystem


@threestudio.register("dreamfusion-system")
class DreamFusion(BaseSystem):
    def training_step(self, batch, batch_idx):
        out = self(batch)
        loss_rgb = F.mse_loss(out["rgb"], batch["rgb"])
        loss_mask = F.binary_cross_entropy(out["opacity"].clamp(1e-5, 1 - 1e-5), batch["mask"].float())
        return loss_rgb + loss_mask
