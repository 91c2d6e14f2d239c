from .mask_loss import mask_rcnn_loss
