import torch
import torch.nn as nn


class ImageEncoderViT(nn.Module):
    def __init__(self, embed_dim=1280, out_chans=256):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, kernel_size=16, stride=16)
        self.neck = nn.Conv2d(embed_dim, out_chans, kernel_size=1)

    def forward(self, x):
        x = self.patch_embed(x)
        cls_pos = torch.zeros(x.shape[0], x.shape[1], 1, x.shape[3], device=x.device)
        x = torch.cat([x, cls_pos], dim=2)
        return self.neck(x)
