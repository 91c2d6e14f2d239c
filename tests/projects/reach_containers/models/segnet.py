from torch import nn

from .blocks import Block, Embed, SegHead
from .registry import MODELS


@MODELS.register_module()
class SegNet(nn.Module):
    def __init__(self, dim=32, depth=2, num_classes=4):
        super().__init__()
        self.stem = nn.Sequential(Embed(dim), nn.GELU())
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        heads = []
        heads.append(SegHead(dim, num_classes))
        self.heads = nn.ModuleList(heads)

    def forward(self, x, mask):
        h = self.stem(x)
        for blk in self.blocks:
            h = blk(h, mask)
        return self.heads[0](h, mask)
