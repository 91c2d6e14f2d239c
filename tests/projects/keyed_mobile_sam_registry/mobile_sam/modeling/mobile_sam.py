import torch.nn as nn

from .tiny_vit_sam import TinyViT


class MobileSam(nn.Module):
    """SAM with the distilled TinyViT image encoder."""

    def __init__(self):
        super().__init__()
        self.image_encoder = TinyViT()

    def forward(self, image):
        return self.image_encoder(image)
