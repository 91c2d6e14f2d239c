import torch
from torch import nn


class BEVDepth(nn.Module):
    def __init__(self, in_channels=32, bev_channels=16, num_classes=8):
        super().__init__()
        self.backbone = nn.Linear(in_channels, bev_channels)
        self.history_fuse = nn.Linear(bev_channels, bev_channels)
        self.head = nn.Linear(bev_channels, num_classes)

    def extract_history(self, history_imgs):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            history_feats = self.backbone(history_imgs)
        return history_feats

    def fuse_history(self, bev_feats, history):
        return bev_feats + self.history_fuse(history)

    def forward(self, history_imgs, bev_feats):
        history = self.extract_history(history_imgs)
        return self.head(self.fuse_history(bev_feats, history=history))
