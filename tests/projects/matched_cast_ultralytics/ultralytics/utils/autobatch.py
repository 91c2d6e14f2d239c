import torch

from ultralytics.nn.prompt import PromptEncoder
from ultralytics.utils.torch_utils import profile


def check_train_batch_size(imgsz=64):
    model = PromptEncoder()
    points = [torch.empty(b, 4, 2) for b in (1, 2, 4, 8)]
    return profile(points, model, n=3, device="cpu")
