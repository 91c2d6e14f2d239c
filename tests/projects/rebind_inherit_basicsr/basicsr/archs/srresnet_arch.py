from torch import nn as nn
from torch.nn import functional as F


class MSRResNet(nn.Module):
    """Modified SRResNet: a body of residual blocks, then pixel-shuffle upsampling."""

    def __init__(self, num_in_ch=3, num_out_ch=3, num_feat=64, num_block=4, upscale=2):
        super(MSRResNet, self).__init__()
        self.upscale = upscale
        self.conv_first = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1)
        self.body = nn.Sequential(*[nn.Conv2d(num_feat, num_feat, 3, 1, 1) for _ in range(num_block)])
        self.upconv1 = nn.Conv2d(num_feat, num_feat * upscale * upscale, 3, 1, 1)
        self.pixel_shuffle = nn.PixelShuffle(upscale)
        self.conv_last = nn.Conv2d(num_feat, num_out_ch, 3, 1, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.1, inplace=True)

    def forward(self, x):
        feat = self.lrelu(self.conv_first(x))
        out = self.body(feat)
        out = self.lrelu(self.pixel_shuffle(self.upconv1(out)))
        out = self.conv_last(out)
        base = F.interpolate(x, scale_factor=self.upscale, mode='bilinear', align_corners=False)
        return out + base
