"""Laid out like facebookresearch/detectron2 tools/plain_train_net.py, with the step under
torch.autocast."""
import torch

from detectron2.config import get_cfg
from detectron2.modeling import build_model


def do_train(cfg, model, data_loader):
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.SOLVER.BASE_LR)
    for data in data_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss_dict = model(data)
            losses = sum(loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.freeze()
    return cfg


def main(args):
    cfg = setup(args)
    model = build_model(cfg)
    do_train(cfg, model, [])
