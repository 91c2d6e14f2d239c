import torch
import torch.nn as nn
import torch.nn.functional as F

from drqa.reader import utils


class LinearSeqAttn(nn.Module):
    """Self attention over a sequence: alpha_j = softmax(w . x_j)."""

    def __init__(self, input_size):
        super().__init__()
        self.linear = nn.Linear(input_size, 1)

    def forward(self, x, x_mask):
        x_flat = x.view(-1, x.size(-1))
        scores = self.linear(x_flat).view(x.size(0), x.size(1))
        scores = utils.mask_scores(scores, x_mask)
        return F.softmax(scores, dim=-1)


def weighted_avg(x, weights):
    return weights.unsqueeze(1).bmm(x).squeeze(1)
