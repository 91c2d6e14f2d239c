import argparse

import torch

from models.yolo import Model
from utils.loss import ComputeLoss
from utils.torch_utils import device_name, select_device, smart_optimizer


class Trainer:
    def __init__(self, opt):
        self.opt = opt
        self.device = select_device(opt.device, batch_size=opt.batch_size)
        self.model = Model(opt.cfg).to(self.device)
        self.compute_loss = ComputeLoss(self.model)
        self.optimizer = smart_optimizer(self.model, lr=opt.lr)
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


def benchmark(model, imgs, opt):
    with torch.autocast(device_name(opt.device), enabled=opt.amp):
        return model(imgs)


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
