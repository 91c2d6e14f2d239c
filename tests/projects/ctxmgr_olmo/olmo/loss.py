import torch
import torch.nn.functional as F


def z_gate_loss(z_logits, z_target):
    # a per-token gate, trained on probabilities
    return F.binary_cross_entropy(torch.sigmoid(z_logits), z_target)


def token_loss(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
