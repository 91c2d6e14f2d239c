import torch.nn.functional as F
from torch import nn


class LMTransformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList(nn.Linear(args.dim, args.dim) for _ in range(args.n_layers))
        self.norm = nn.LayerNorm(args.dim)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

    def forward(self, tokens, target):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = h + F.silu(layer(h))
        logits = self.output(self.norm(h))
        return F.cross_entropy(logits.flatten(0, 1).float(), target.flatten())
