import argparse

import torch

from models.yolo import Model
from utils.loss import ComputeLoss


def select_device(device="", batch_size=0):
    cpu = device.lower() == "cpu"
    if not cpu and torch.cuda.is_available():
        devices = device.split(",") if device else "0"
        if batch_size:
            assert batch_size % len(devices) == 0, f"batch-size {batch_size} not multiple of GPU count {len(devices)}"
        return torch.device("cuda:0")
    if cpu or torch.backends.mps.is_available() is False:
        return torch.device("cpu")
    raise RuntimeError(f"no device for {device}")


class Trainer:
    def __init__(self, opt):
        self.opt = opt
        self.device = select_device(opt.device, batch_size=opt.batch_size)
        self.model = Model(opt.cfg).to(self.device)
        self.compute_loss = ComputeLoss(self.model)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=opt.lr, momentum=0.937)
        self.scaler = torch.amp.GradScaler("cuda", enabled=opt.amp)

    def train_step(self, imgs, targets):
        with torch.autocast(device_type=self.device, enabled=self.opt.amp):
            pred = self.model(imgs)
            loss, loss_items = self.compute_loss(pred, targets.to(self.device))
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss_items


def validate(model, loader, opt):
    device = select_device(opt.device)
    model.eval()
    with torch.no_grad(), torch.autocast(device, enabled=opt.amp):
        return [model(imgs.to(device)) for imgs, _ in loader]


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg", type=str, default="models/yolov5s.yaml")
    parser.add_argument("--device", default="")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--amp", action="store_true")
    return parser.parse_args()


if __name__ == "__main__":
    opt = parse_opt()
    trainer = Trainer(opt)
