import torch.nn as nn

from esm.modules import SinusoidalPositionalEmbedding


class ProteinBertModel(nn.Module):
    def __init__(self, alphabet_size, embed_dim=33, padding_idx=1):
        super().__init__()
        self.embed_tokens = nn.Embedding(alphabet_size, embed_dim, padding_idx=padding_idx)
        self.embed_positions = SinusoidalPositionalEmbedding(embed_dim, padding_idx)
        self.out = nn.Linear(embed_dim, alphabet_size)

    def forward(self, tokens):
        x = self.embed_tokens(tokens) + self.embed_positions(tokens)
        return self.out(x)
