import torch
import torch.nn as nn

from xformers.components.feedforward import build_feedforward


class GPT(nn.Module):
    def __init__(self, vocab_size, n_embd=64):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.mlp = build_feedforward({"name": "FusedMLP", "dim_model": n_embd})
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        return self.head(self.mlp(self.emb(idx)))


def train(model, data, steps=100, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    for _ in range(steps):
        ix = torch.randint(len(data) - 33, (16,))
        x = torch.stack([data[i: i + 32] for i in ix]).to(device)
        y = torch.stack([data[i + 1: i + 33] for i in ix]).to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    text = "hello world, " * 200
    chars = sorted(set(text))
    data = torch.tensor([chars.index(c) for c in text])
    train(GPT(len(chars)).cuda(), data)
