import torch
import torch.nn.functional as F
from torch import nn


class DETR(nn.Module):
    def __init__(self, num_classes, num_queries=100, hidden_dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden_dim, 16, 16), nn.ReLU())
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.transformer = nn.Transformer(hidden_dim, 8, 2, 2, batch_first=True)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = nn.Linear(hidden_dim, 4)

    def forward(self, samples):
        src = self.backbone(samples).flatten(2).transpose(1, 2)
        tgt = self.query_embed.weight.unsqueeze(0).expand(src.size(0), -1, -1)
        hs = self.transformer(src, tgt)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


class SetCriterion(nn.Module):
    def __init__(self, num_classes, eos_coef=0.1):
        super().__init__()
        self.num_classes = num_classes
        empty_weight = torch.ones(num_classes + 1)
        empty_weight[-1] = eos_coef
        self.register_buffer("empty_weight", empty_weight)

    def forward(self, outputs, targets):
        logits = outputs["pred_logits"]
        target_classes = torch.full(logits.shape[:2], self.num_classes, dtype=torch.int64, device=logits.device)
        loss_ce = F.cross_entropy(logits.transpose(1, 2), target_classes, self.empty_weight)
        boxes = torch.cat([t["boxes"] for t in targets])
        loss_bbox = F.l1_loss(outputs["pred_boxes"].flatten(0, 1)[: len(boxes)], boxes)
        return loss_ce + 5 * loss_bbox
