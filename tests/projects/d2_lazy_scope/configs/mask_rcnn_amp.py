from .common.models.mask_rcnn_fpn import model
from .common.train import train

model.num_classes = 80
train.amp.enabled = True
train.max_iter = 270000
