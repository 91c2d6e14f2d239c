import torch
from torch.nn import functional as F

from basicsr.archs import build_network
from basicsr.models.base_model import BaseModel


class SRModel(BaseModel):
    """Base SR model for single image super-resolution (this fork: bf16 autocast)."""

    def __init__(self, opt):
        super(SRModel, self).__init__(opt)
        self.net_g = build_network(opt['network_g'])
        self.net_g = self.model_to_device(self.net_g)
        if self.is_train:
            self.init_training_settings()

    def init_training_settings(self):
        self.net_g.train()
        train_opt = self.opt['train']
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=train_opt['lr'])
        self.optimizers.append(self.optimizer_g)

    def feed_data(self, data):
        self.lq = data['lq'].to(self.device)
        self.gt = data['gt'].to(self.device)

    def optimize_parameters(self, current_iter):
        self.optimizer_g.zero_grad()
        with torch.autocast(device_type='cuda', dtype=torch.bfloat16):
            self.output = self.net_g(self.lq)
            l_pix = F.l1_loss(self.output, self.gt)
        l_pix.backward()
        self.optimizer_g.step()
        return l_pix.item()
