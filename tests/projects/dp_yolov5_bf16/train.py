import argparse

import torch
import torch.nn as nn

from models.yolo import Model
from utils.loss import ComputeLoss


def train(hyp, opt, device):
    cuda = device.type != 'cpu'
    model = Model(opt.cfg, ch=3, nc=opt.nc).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)

    # DP mode
    if cuda and torch.cuda.device_count() > 1:
        print('WARNING: DP not recommended, use torch.distributed.run for best DDP Multi-GPU results.')
        model = torch.nn.DataParallel(model)

    compute_loss = ComputeLoss(model)
    for epoch in range(opt.epochs):
        model.train()
        for imgs, targets in opt.loader:
            imgs = imgs.to(device, non_blocking=True).float() / 255
            with torch.autocast('cuda', dtype=torch.bfloat16, enabled=opt.amp):
                pred = model(imgs)
                loss, loss_items = compute_loss(pred, targets.to(device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg', type=str, default='yolov5s.yaml')
    parser.add_argument('--nc', type=int, default=80)
    parser.add_argument('--epochs', type=int, default=300)
    parser.add_argument('--amp', action='store_true')
    return parser.parse_args()


if __name__ == '__main__':
    opt = parse_opt()
    train({'lr0': 0.01, 'momentum': 0.937}, opt, torch.device('cuda:0'))
