import torch

from deploy.loader import load


@torch.inference_mode()
def predict(batches, path):
    model = load(path)
    return [model(x.cuda().half(), mask.cuda()) for x, mask in batches]
