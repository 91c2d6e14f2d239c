from .mask_head import mask_rcnn_loss, MaskRCNNHead
