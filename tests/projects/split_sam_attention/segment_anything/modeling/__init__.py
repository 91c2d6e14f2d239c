from .image_encoder import Attention, ImageEncoderViT
