import torch

from models import Net


def load(path):
    m = Net()
    m.load_state_dict(torch.load(path, map_location="cpu"))
    return m.cuda().half().eval()
