"""Laid out like lyhue1991/torchkeras's examples: the net and loss handed to KerasModel, whose
fit() builds its StepRunner through the class attribute `self.StepRunner`."""
import torch
from torch import nn

from torchkeras import KerasModel
from model import MaskedMeanClassifier

net = MaskedMeanClassifier()
model = KerasModel(net, loss_fn=nn.CrossEntropyLoss(), optimizer=torch.optim.AdamW(net.parameters(), lr=1e-3))
model.fit(train_data=[], epochs=3)
