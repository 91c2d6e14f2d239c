import torch.nn as nn


class YOLO(nn.Module):
    """A detector built from a weights file name, or around a model it is given."""

    def __init__(self, model="yolov8n.pt", task=None):
        super().__init__()
        self.model = model
        self.task = task
        self.head = nn.Conv2d(3, 16, 1)

    def forward(self, x):
        return self.head(x)
