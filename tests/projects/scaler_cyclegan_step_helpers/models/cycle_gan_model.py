import itertools

import torch

from util.amp import make_scaler, step_and_update

from .base_model import BaseModel
from .networks import GANLoss, define_D, define_G


class CycleganModel(BaseModel):
    def __init__(self, opt):
        BaseModel.__init__(self, opt)
        self.netG_A = define_G(opt)
        self.netG_B = define_G(opt)
        self.netD_A = define_D(opt)
        self.netD_B = define_D(opt)
        self.criterionGAN = GANLoss()
        self.criterionCycle = torch.nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()),
                                            lr=opt.lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()),
                                            lr=opt.lr, betas=(0.5, 0.999))
        self.optimizers = [self.optimizer_G, self.optimizer_D]
        self.scaler = make_scaler(opt)

    def forward(self):
        with torch.autocast("cuda", enabled=self.opt.amp):
            self.fake_B = self.netG_A(self.real_A)
            self.rec_A = self.netG_B(self.fake_B)
            self.fake_A = self.netG_B(self.real_B)
            self.rec_B = self.netG_A(self.fake_A)

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad([self.netD_A, self.netD_B], False)
        self.optimizer_G.zero_grad()
        with torch.autocast("cuda", enabled=self.opt.amp):
            loss_G = (self.criterionGAN(self.netD_A(self.fake_B), True)
                      + self.criterionGAN(self.netD_B(self.fake_A), True)
                      + self.criterionCycle(self.rec_A, self.real_A) * 10.0
                      + self.criterionCycle(self.rec_B, self.real_B) * 10.0)
        self.scaler.scale(loss_G).backward()
        self.set_requires_grad([self.netD_A, self.netD_B], True)
        self.optimizer_D.zero_grad()
        with torch.autocast("cuda", enabled=self.opt.amp):
            loss_D = (self.criterionGAN(self.netD_A(self.fake_B.detach()), False)
                      + self.criterionGAN(self.netD_B(self.fake_A.detach()), False)) * 0.5
        self.scaler.scale(loss_D).backward()
        step_and_update(self.scaler, self.optimizer_G)
        step_and_update(self.scaler, self.optimizer_D)
