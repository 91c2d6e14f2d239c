import torch

from .modeling.image_encoder import ImageEncoderViT


def build_sam_vit_b(checkpoint=None):
    encoder = ImageEncoderViT(embed_dim=768, depth=12, num_heads=12)
    encoder.eval()
    if checkpoint is not None:
        with open(checkpoint, "rb") as f:
            encoder.load_state_dict(torch.load(f))
    return encoder
