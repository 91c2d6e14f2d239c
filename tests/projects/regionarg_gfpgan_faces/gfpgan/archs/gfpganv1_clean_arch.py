import torch.nn as nn
import torch.nn.functional as F


class StyleConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, 1, 1)

    def forward(self, x, weight=0.5):
        return F.leaky_relu(self.conv(x), 0.2) * weight + x


class GFPGANv1Clean(nn.Module):
    def __init__(self, out_size=512, num_style_feat=64, narrow=1):
        super().__init__()
        ch = int(32 * narrow)
        self.conv_body_first = nn.Conv2d(3, ch, 1)
        self.style_convs = nn.ModuleList([StyleConv(ch) for _ in range(2)])
        self.final_conv = nn.Conv2d(ch, 3, 3, 1, 1)

    def forward(self, x, return_rgb=True, weight=0.5):
        feat = self.conv_body_first(x)
        for conv in self.style_convs:
            feat = conv(feat, weight)
        return self.final_conv(feat), [feat] if return_rgb else []
