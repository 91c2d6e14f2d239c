import torch

from vissl.losses import get_loss_module
from vissl.models.base_ssl_model import BaseSSLMultiInputOutputModel


class SelfSupervisionTask:
    def __init__(self, config):
        self.config = config
        self.amp_args = config.get("AMP_PARAMS")
        self.base_model = BaseSSLMultiInputOutputModel(config["MODEL"]["NUM_CLASSES"])
        self.loss = get_loss_module(config["LOSS"])
        self.optimizer = torch.optim.SGD(self.base_model.parameters(), lr=config["OPTIMIZER"]["lr"])
