import torch.nn as nn

from .image_encoder import ImageEncoderViT


class Sam(nn.Module):
    """SAM with the ViT-H image encoder."""

    def __init__(self, embed_dim=1280):
        super().__init__()
        self.image_encoder = ImageEncoderViT(embed_dim=embed_dim)

    def forward(self, image):
        return self.image_encoder(image)
