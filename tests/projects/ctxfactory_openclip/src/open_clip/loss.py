import torch
import torch.nn.functional as F


def distill_loss(image_features, text_features, logit_scale, teacher_logits):
    logits = logit_scale * image_features @ text_features.T
    targets = torch.sigmoid(teacher_logits)
    return F.binary_cross_entropy(torch.sigmoid(logits), targets)
