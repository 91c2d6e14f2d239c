import torch

from allennlp.nn import util


class CnnEncoder(torch.nn.Module):
    def __init__(self, embedding_dim, num_filters):
        super().__init__()
        self.conv = torch.nn.Conv1d(embedding_dim, num_filters, 3, padding=1)

    def forward(self, tokens, mask):
        filtered = torch.relu(self.conv(tokens.transpose(1, 2)))
        return util.masked_max(filtered, mask.unsqueeze(1), dim=2)
