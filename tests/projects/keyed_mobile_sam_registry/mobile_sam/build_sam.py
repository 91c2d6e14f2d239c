import torch

from .modeling import MobileSam, Sam


def build_sam_vit_h(checkpoint=None):
    sam = Sam(embed_dim=1280)
    if checkpoint is not None:
        sam.load_state_dict(torch.load(checkpoint))
    return sam


def build_sam_vit_t(checkpoint=None):
    mobile_sam = MobileSam()
    if checkpoint is not None:
        mobile_sam.load_state_dict(torch.load(checkpoint))
    return mobile_sam


sam_model_registry = {
    "default": build_sam_vit_h,
    "vit_h": build_sam_vit_h,
    "vit_t": build_sam_vit_t,
}


def build_sam(name, checkpoint=None):
    return sam_model_registry[name](checkpoint)
