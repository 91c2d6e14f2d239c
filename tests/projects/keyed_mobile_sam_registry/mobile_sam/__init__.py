from .build_sam import build_sam, build_sam_vit_h, build_sam_vit_t, sam_model_registry
