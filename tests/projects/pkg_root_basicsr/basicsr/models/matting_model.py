import torch
from torch import nn

from basicsr.losses import BCEMaskLoss, L1Loss


class MattingModel:
    def __init__(self, opt):
        self.opt = opt
        self.net_g = nn.Conv2d(3, 1, 3, padding=1).cuda()
        self.cri_pix = L1Loss(loss_weight=1.0)
        self.cri_mask = BCEMaskLoss(loss_weight=0.5)
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=2e-4)
        self.scaler = torch.amp.GradScaler("cuda")

    def optimize_parameters(self, lq, gt):
        self.optimizer_g.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            output = self.net_g(lq)
            l_total = self.cri_pix(output, gt) + self.cri_mask(output, gt)
        self.scaler.scale(l_total).backward()
        self.scaler.step(self.optimizer_g)
        self.scaler.update()
