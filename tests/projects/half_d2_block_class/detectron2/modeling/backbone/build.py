from .resnet import build_resnet_backbone


def build_backbone(cfg):
    """Build a backbone from `cfg.MODEL.BACKBONE.NAME` (this fork has the ResNet one only)."""
    backbone = build_resnet_backbone(cfg)
    return backbone
