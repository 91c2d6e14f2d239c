from .base import BaseDetector
from .mask_rcnn import MaskRCNN
from .retinanet import RetinaNet
from .single_stage import SingleStageDetector
from .sparse import SparseDetector
from .two_stage import TwoStageDetector
