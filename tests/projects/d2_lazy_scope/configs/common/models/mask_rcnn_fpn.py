from detectron2.config import LazyCall as L

from maskx.modeling import MaskRCNNX

model = L(MaskRCNNX)(num_classes=80, dim=256)
