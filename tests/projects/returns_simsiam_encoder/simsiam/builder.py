import torch.nn as nn

from simsiam.resnet import ResNet


class SimSiam(nn.Module):
    def __init__(self, dim=2048, pred_dim=512):
        super().__init__()
        self.encoder = ResNet(num_classes=dim)
        self.predictor = nn.Sequential(nn.Linear(dim, pred_dim, bias=False), nn.BatchNorm1d(pred_dim),
                                       nn.ReLU(inplace=True), nn.Linear(pred_dim, dim))

    def forward(self, x1, x2):
        z1, z2 = self.encoder(x1), self.encoder(x2)
        return self.predictor(z1), self.predictor(z2), z1.detach(), z2.detach()
