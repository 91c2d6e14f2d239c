import torch
import torch.nn as nn


class PatchScorer(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, features, keep):
        scores = self.score(features).squeeze(-1)
        # padded patches must never be selected
        return scores.masked_fill(~keep, -1e9)


class CLIPVisionTower(nn.Module):
    def __init__(self, vision_tower, args, hidden_size=1024):
        super().__init__()
        self.vision_tower_name = vision_tower
        self.select_layer = args.mm_vision_select_layer
        self.patch_embed = nn.Conv2d(3, hidden_size, kernel_size=14, stride=14)
        self.scorer = PatchScorer(hidden_size)

    def forward(self, images, keep):
        features = self.patch_embed(images).flatten(2).transpose(1, 2)
        scores = self.scorer(features, keep)
        top = scores.topk(256, dim=-1).indices
        return torch.gather(features, 1, top[..., None].expand(-1, -1, features.shape[-1]))
