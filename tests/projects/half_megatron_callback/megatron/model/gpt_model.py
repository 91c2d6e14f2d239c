import torch
import torch.nn.functional as F

from .module import MegatronModule


class GPTModel(MegatronModule):
    def __init__(self, vocab_size, hidden_size, num_layers):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, hidden_size)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(hidden_size, hidden_size) for _ in range(num_layers))
        self.final_layernorm = torch.nn.LayerNorm(hidden_size)

    def forward(self, tokens, labels):
        hidden = self.embedding(tokens)
        for layer in self.layers:
            hidden = hidden + F.gelu(layer(hidden))
        logits = F.linear(self.final_layernorm(hidden), self.embedding.weight)
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())
