import torch
import torch.nn.functional as F


def siglip_loss(image_features, text_features, logit_scale, logit_bias):
    logits = logit_scale * image_features @ text_features.T + logit_bias
    labels = torch.eye(logits.shape[0], device=logits.device, dtype=logits.dtype)
    return F.binary_cross_entropy(torch.sigmoid(logits), labels)
