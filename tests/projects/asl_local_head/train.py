import torch
import torch.nn as nn

from src.models import create_model


class MultiLabelHead(nn.Module):
    def __init__(self, num_features, num_classes):
        super().__init__()
        self.fc = nn.Linear(num_features, num_classes)

    def loss(self, features, y):
        xs_pos = torch.sigmoid(self.fc(features))
        xs_neg = 1 - xs_pos
        los_pos = y * torch.log(xs_pos.clamp(min=1e-8))
        los_neg = (1 - y) * torch.log(xs_neg.clamp(min=1e-8))
        return -(los_pos + los_neg).sum()


def train_multi_label_coco(loader, num_classes=80, lr=1e-4):
    model = create_model()
    head = MultiLabelHead(model.num_features, num_classes)
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=lr)
    for inputs, target in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = head.loss(model(inputs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
