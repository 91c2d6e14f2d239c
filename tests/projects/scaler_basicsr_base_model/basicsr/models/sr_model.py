from collections import OrderedDict

import torch

from .base_model import BaseModel


class SRModel(BaseModel):
    """Base SR model for single image super-resolution."""

    def __init__(self, opt):
        super(SRModel, self).__init__(opt)
        self.net_g = opt["network_g"]
        if self.is_train:
            self.init_training_settings()

    def init_training_settings(self):
        train_opt = self.opt["train"]
        optim_type = train_opt["optim_g"].pop("type")
        self.optimizer_g = self.get_optimizer(optim_type, self.net_g.parameters(), **train_opt["optim_g"])
        self.optimizers.append(self.optimizer_g)

    def feed_data(self, data):
        self.lq = data["lq"].to(self.device)
        self.gt = data["gt"].to(self.device)

    def optimize_parameters(self, current_iter):
        loss_dict = OrderedDict()
        with torch.autocast("cuda", enabled=self.use_amp):
            self.output = self.net_g(self.lq)
            l_pix = self.cri_pix(self.output, self.gt)
        loss_dict["l_pix"] = l_pix
        self.scaler.scale(l_pix).backward()
        self.optimizer_step(self.optimizer_g)
        self.scaler.update()
        self.log_dict = self.reduce_loss_dict(loss_dict)
