import torch

from .base_model import BaseModel
from .networks import GANLoss, define_D, define_G


class Pix2pixModel(BaseModel):
    def __init__(self, opt):
        BaseModel.__init__(self, opt)
        self.netG = define_G(opt)
        self.netD = define_D(opt)
        self.criterionGAN = GANLoss()
        self.criterionL1 = torch.nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(0.5, 0.999))
        self.optimizers = [self.optimizer_G, self.optimizer_D]
        self.scaler = torch.amp.GradScaler("cuda", enabled=opt.amp)

    def forward(self):
        with torch.autocast("cuda", enabled=self.opt.amp):
            self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        with torch.autocast("cuda", enabled=self.opt.amp):
            fake_AB = torch.cat((self.real_A, self.fake_B), 1)
            loss_D_fake = self.criterionGAN(self.netD(fake_AB.detach()), False)
            real_AB = torch.cat((self.real_A, self.real_B), 1)
            loss_D_real = self.criterionGAN(self.netD(real_AB), True)
            self.loss_D = (loss_D_fake + loss_D_real) * 0.5
        self.scaler.scale(self.loss_D).backward()

    def backward_G(self):
        with torch.autocast("cuda", enabled=self.opt.amp):
            fake_AB = torch.cat((self.real_A, self.fake_B), 1)
            self.loss_G_GAN = self.criterionGAN(self.netD(fake_AB), True)
            self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.opt.lambda_L1
            self.loss_G = self.loss_G_GAN + self.loss_G_L1
        self.scaler.scale(self.loss_G).backward()

    def amp_step(self, optimizer):
        self.scaler.step(optimizer)
        self.scaler.update()

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.amp_step(self.optimizer_D)
        self.amp_step(self.optimizer_G)
