import pytorch_lightning as pl
import torch


class BaseSystem(pl.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.density = torch.nn.Linear(3, 1)
        self.color = torch.nn.Linear(3, 3)

    def forward(self, batch):
        points = batch["points"]
        return {"opacity": torch.sigmoid(self.density(points)), "rgb": torch.sigmoid(self.color(points))}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
