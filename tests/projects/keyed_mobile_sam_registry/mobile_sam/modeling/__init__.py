from .mobile_sam import MobileSam
from .sam import Sam
