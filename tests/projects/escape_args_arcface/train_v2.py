import argparse
import importlib

import torch

from backbones import get_model
from losses import CosFace
from partial_fc_v2 import PartialFC_V2


def main(config_name):
    cfg = importlib.import_module(f"configs.{config_name}").config
    backbone = get_model(cfg.network, num_features=cfg.embedding_size).to(cfg.device)
    module_partial_fc = PartialFC_V2(CosFace(), cfg.embedding_size, cfg.num_classes).to(cfg.device)
    params = list(backbone.parameters()) + list(module_partial_fc.parameters())
    opt = torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    amp = torch.amp.GradScaler(cfg.device, enabled=cfg.fp16)
    for _ in range(cfg.num_epoch):
        img = torch.randn(4, 3, 16, 16, device=cfg.device)
        local_labels = torch.randint(0, cfg.num_classes, (4,), device=cfg.device)
        with torch.autocast(cfg.device, enabled=cfg.fp16):
            local_embeddings = backbone(img)
        loss = module_partial_fc(local_embeddings, local_labels)
        amp.scale(loss).backward()
        amp.step(opt)
        amp.update()
        opt.zero_grad()
        module_partial_fc.update_centers(local_embeddings.detach(), local_labels)
    return loss


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Distributed Arcface Training in Pytorch")
    parser.add_argument("config", type=str)
    main(parser.parse_args().config)
