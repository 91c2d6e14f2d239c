import torch
import torch.nn as nn


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def forward(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return self.loss(prediction, target)


def define_G(opt):
    return nn.Sequential(nn.Conv2d(opt.input_nc, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, opt.output_nc, 3, padding=1))


def define_D(opt):
    return nn.Sequential(nn.Conv2d(opt.input_nc + opt.output_nc, 64, 4, stride=2), nn.LeakyReLU(0.2), nn.Conv2d(64, 1, 4))
