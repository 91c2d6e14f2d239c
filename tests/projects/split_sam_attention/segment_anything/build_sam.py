from .modeling import ImageEncoderViT


def build_sam_vit_b(embed_dim=768, num_heads=12):
    return ImageEncoderViT(embed_dim=embed_dim, num_heads=num_heads)
