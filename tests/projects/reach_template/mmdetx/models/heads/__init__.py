from .base_dense_head import BaseDenseHead
from .retina_head import RetinaHead
from .roi_head import StandardRoIHead
from .ssd_head import SSDHead
from .debug_head import DebugHead
