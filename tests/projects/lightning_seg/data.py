import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class SegDataModule(L.LightningDataModule):
    def __init__(self, batch_size=16):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        x = torch.randn(64, 3, 32, 32)
        y = (torch.rand(64, 1, 32, 32) > 0.5).float()
        self.train_set = TensorDataset(x, y)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size)
