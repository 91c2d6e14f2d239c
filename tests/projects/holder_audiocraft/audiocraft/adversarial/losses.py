import torch
import torch.nn.functional as F


def adversarial_loss(fake_logits):
    probs = torch.sigmoid(fake_logits)
    return F.binary_cross_entropy(probs, torch.ones_like(probs))


def feature_matching_loss(fmap_real, fmap_fake):
    return sum(F.l1_loss(fake, real.detach()) for real, fake in zip(fmap_real, fmap_fake)) / len(fmap_real)
