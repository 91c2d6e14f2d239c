"""Laid out like facebookresearch/SlowFast tools/train_net.py, with the optimizer helper of
slowfast/models/optimizer.py kept beside the loop: the model is halved by the caller."""
import torch

from slowfast.models import build_model


def construct_optimizer(model, cfg):
    bn_parameters, non_bn_parameters = [], []
    for name, m in model.named_modules():
        is_bn = isinstance(m, torch.nn.modules.batchnorm._NormBase)
        for p in m.parameters(recurse=False):
            (bn_parameters if is_bn else non_bn_parameters).append(p)
    optim_params = [
        {"params": bn_parameters, "weight_decay": cfg.BN.WEIGHT_DECAY},
        {"params": non_bn_parameters, "weight_decay": cfg.SOLVER.WEIGHT_DECAY},
    ]
    return torch.optim.Adam(optim_params, lr=cfg.SOLVER.BASE_LR, eps=1e-8)


def train(cfg, loader):
    model = build_model(cfg)
    if cfg.TRAIN.HALF:
        model = model.half()
    optimizer = construct_optimizer(model, cfg)
    for inputs, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(inputs.cuda().half()).float(), labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
