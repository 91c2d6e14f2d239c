from .build_sam import build_sam_vit_b
