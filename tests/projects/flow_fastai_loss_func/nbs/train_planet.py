import torch.nn as nn

from fastai.learner import Learner
from fastai.losses import soft_bce_flat

model = nn.Sequential(nn.Conv2d(3, 32, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 17))
learn = Learner([], model, loss_func=soft_bce_flat, fp16=True)
learn.fit(5)
