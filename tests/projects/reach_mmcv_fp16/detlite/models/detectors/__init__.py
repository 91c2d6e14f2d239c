from .attn_detector import AttnDetector
