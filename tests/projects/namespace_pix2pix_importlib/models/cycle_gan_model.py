import torch

from . import networks
from .base_model import BaseModel


class CycleGANModel(BaseModel):
    def __init__(self, opt):
        BaseModel.__init__(self, opt)
        self.netG = networks.define_G(3)
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr)

    def set_input(self, input):
        self.real_A = input["A"]

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def compute_G_loss(self):
        return (self.fake_B - self.real_A).abs().mean()
