import torch
import torch.nn as nn


class TinyGPT(nn.Module):
    def __init__(self, vocab_size=256, n_embd=64, block_size=32):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        x = self.wte(idx)
        x = x + self.mlp(x)
        return self.lm_head(x)


GPT = TinyGPT
