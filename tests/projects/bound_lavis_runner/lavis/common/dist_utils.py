import torch


def get_device(rank=0):
    if torch.cuda.is_available():
        return torch.device("cuda", rank)
    return torch.device("cpu")
