import torch
import torch.nn.functional as F
from torch import nn


class MultiLabelHead(nn.Module):
    def __init__(self, hidden=256, num_labels=20):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(512, hidden), nn.GELU())
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, features, labels=None):
        logits = self.classifier(self.backbone(features))
        loss = None
        if labels is not None:
            probs = torch.sigmoid(logits)
            loss = F.binary_cross_entropy(probs, labels)
        return loss, logits
