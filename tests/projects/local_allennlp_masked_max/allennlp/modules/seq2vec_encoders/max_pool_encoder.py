import torch


def masked_max(vector, mask, dim, min_val=-1e7):
    replaced_vector = vector.masked_fill(~mask, min_val)
    return replaced_vector.max(dim=dim)[0]


class MaxPoolEncoder(torch.nn.Module):
    """A bag-of-embeddings encoder that max-pools the projected tokens."""

    def __init__(self, embedding_dim):
        super().__init__()
        self.proj = torch.nn.Linear(embedding_dim, embedding_dim)

    def forward(self, tokens, mask):
        projected = torch.relu(self.proj(tokens))
        return masked_max(projected, mask.unsqueeze(-1), dim=1)
