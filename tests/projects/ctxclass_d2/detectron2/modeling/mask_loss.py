import torch
import torch.nn.functional as F


def mask_rcnn_loss(pred_mask_logits, gt_masks):
    mask_probs = pred_mask_logits.sigmoid()
    return F.binary_cross_entropy(mask_probs, gt_masks.to(dtype=torch.float32), reduction="mean")
