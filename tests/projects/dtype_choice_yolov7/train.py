import argparse
import logging

import torch

from models.yolo import Model
from utils.loss import ComputeLoss

logger = logging.getLogger(__name__)


def train(hyp, opt, device):
    cuda = device.type != "cpu"
    model = Model(opt.cfg, ch=3, nc=80).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp["lr0"], momentum=hyp["momentum"], nesterov=True)
    if cuda and torch.cuda.device_count() > 1:
        logger.warning("Using DataParallel, DDP is recommended for multi-GPU training")
        model = torch.nn.DataParallel(model)
    compute_loss = ComputeLoss(model)
    amp_dtype = torch.bfloat16 if opt.bf16 else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=cuda and not opt.bf16)
    for epoch in range(opt.epochs):
        model.train()
        imgs = torch.rand(opt.batch_size, 3, opt.img_size, opt.img_size, device=device)
        targets = torch.zeros(opt.batch_size, 6, device=device)
        with torch.autocast("cuda", dtype=amp_dtype, enabled=cuda):
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        logger.info("epoch %d: %s", epoch, loss_items)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", type=str, default="cfg/training/yolov7.yaml")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--img-size", type=int, default=640)
    parser.add_argument("--bf16", action="store_true", help="autocast in bfloat16")
    opt = parser.parse_args()
    train({"lr0": 0.01, "momentum": 0.937}, opt, torch.device("cuda:0" if torch.cuda.is_available() else "cpu"))
