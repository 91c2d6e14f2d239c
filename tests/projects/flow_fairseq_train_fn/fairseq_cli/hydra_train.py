import torch

from fairseq.criterions import FocalLossCriterion
from fairseq.models import build_model
from fairseq_cli.train import train


def main(cfg, epoch_itr):
    model = build_model(cfg).cuda()
    criterion = FocalLossCriterion(gamma=cfg.gamma)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(cfg.max_epoch):
        model.train()
        train(cfg, model, criterion, optimizer, scaler, epoch_itr)
