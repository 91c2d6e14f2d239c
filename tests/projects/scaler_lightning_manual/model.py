"""A LightningModule with manual optimization, shaped like the example of Lightning's docs
(Lightning-AI/pytorch-lightning, docs/source-pytorch/model/manual_optimization.rst, "Gradient
clipping": `manual_backward`, then `self.clip_gradients(opt, ...)`, then `opt.step()`), the case
of Lightning issue #18089: under precision="16-mixed" the clip sees scaled gradients."""
import lightning.pytorch as pl
import torch
from torch import nn


class SimpleModel(pl.LightningModule):
    def __init__(self, in_dim=32, out_dim=2):
        super().__init__()
        self.automatic_optimization = False
        self.net = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, out_dim))

    def compute_loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self.compute_loss(batch)
        opt.zero_grad()
        self.manual_backward(loss)
        self.clip_gradients(opt, gradient_clip_val=0.5, gradient_clip_algorithm="norm")
        opt.step()
        self.log("train_loss", loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
