import torch
from torch import nn


class MMFusionNLG(nn.Module):
    def __init__(self, hidden_size=768, vocab_size=30522):
        super().__init__()
        self.proj = nn.Linear(hidden_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size)

    def forward(self, caps, cmasks):
        hidden = self.proj(caps)
        scores = hidden @ hidden.transpose(-2, -1)
        scores = scores.masked_fill(~cmasks[:, None, :], -1e9)
        return self.lm_head(scores.softmax(dim=-1) @ hidden)

    def generate(self, caps, cmasks, max_length=20):
        outputs = []
        for _ in range(max_length):
            logits = self(caps, cmasks)
            outputs.append(logits[:, -1].argmax(-1))
        return torch.stack(outputs, dim=1)
