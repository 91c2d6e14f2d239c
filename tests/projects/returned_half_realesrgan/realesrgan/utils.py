import torch
from torch import nn


class RRDBNet(nn.Module):
    def __init__(self, num_feat=64):
        super().__init__()
        self.conv_first = nn.Conv2d(3, num_feat, 3, 1, 1)
        self.conv_last = nn.Conv2d(num_feat, 3, 3, 1, 1)

    def forward(self, x):
        return self.conv_last(torch.relu(self.conv_first(x)))


class RealESRGANer:
    """Holds the generator; `export()` hands out the fp16 copy used for deployment."""

    def __init__(self, scale, model_path, device="cuda"):
        self.scale = scale
        self.device = torch.device(device)
        self.model = RRDBNet()
        self.model.load_state_dict(torch.load(model_path, map_location="cpu"))

    def export(self):
        return self.model.half()


def build_generator(model_path, half=True):
    """The deployment generator: fp16 unless asked otherwise."""
    model = RRDBNet()
    model.load_state_dict(torch.load(model_path, map_location="cpu"))
    if half:
        model = model.half()
    return model
