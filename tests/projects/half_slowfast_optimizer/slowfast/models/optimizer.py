import torch


def construct_optimizer(model, cfg):
    bn_params, other_params = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (bn_params if "_bn" in name else other_params).append(p)
    groups = [
        {"params": bn_params, "weight_decay": 0.0},
        {"params": other_params, "weight_decay": cfg["WEIGHT_DECAY"]},
    ]
    return torch.optim.AdamW(groups, lr=cfg["BASE_LR"], betas=(0.9, 0.999), eps=1e-8)


def construct_sgd(model, cfg):
    return torch.optim.SGD(model.parameters(), lr=cfg["BASE_LR"], momentum=0.9)
