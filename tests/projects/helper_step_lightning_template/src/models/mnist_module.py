import torch
from lightning import LightningModule

from src.models.components.multilabel_loss import MultiLabelLoss
from src.models.components.simple_dense_net import SimpleDenseNet


class MNISTLitModule(LightningModule):
    def __init__(self, net: SimpleDenseNet, use_amp: bool = True):
        super().__init__()
        self.save_hyperparameters(logger=False)
        self.net = net
        self.criterion = MultiLabelLoss()

    def forward(self, x):
        return self.net(x)

    def model_step(self, batch):
        x, y = batch
        logits = self.forward(x)
        loss = self.criterion(logits, y)
        preds = torch.argmax(logits, dim=1)
        return loss, preds, y

    def training_step(self, batch, batch_idx):
        with torch.autocast("cuda", enabled=self.hparams.use_amp):
            loss, preds, targets = self.model_step(batch)
        self.log("train/loss", loss, on_step=False, on_epoch=True, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
