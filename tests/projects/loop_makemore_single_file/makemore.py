"""you give this script some words (one per line) and it will generate more things like it."""

import argparse
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import Dataset, DataLoader


@dataclass
class ModelConfig:
    block_size: int = None
    vocab_size: int = None
    n_layer: int = 4
    n_embd: int = 64
    n_head: int = 4


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, -1e9)
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class Transformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}

    def __len__(self):
        return len(self.words)

    def get_output_length(self):
        return self.max_word_length + 1

    def __getitem__(self, idx):
        ix = torch.tensor([self.stoi[w] for w in self.words[idx]], dtype=torch.long)
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1
        return x, y


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Make More")
    parser.add_argument("--input-file", "-i", type=str, default="names.txt")
    parser.add_argument("--work-dir", "-o", type=str, default="out")
    parser.add_argument("--max-steps", type=int, default=-1)
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--batch-size", "-b", type=int, default=32)
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    with open(args.input_file, "r") as f:
        words = [w.strip() for w in f.read().splitlines() if w.strip()]
    chars = sorted(list(set("".join(words))))
    max_word_length = max(len(w) for w in words)
    train_dataset = CharDataset(words, chars, max_word_length)
    config = ModelConfig(vocab_size=len(chars) + 1, block_size=train_dataset.get_output_length())
    model = Transformer(config).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    scaler = torch.amp.GradScaler(args.device)
    loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True)
    for step, (X, Y) in enumerate(loader):
        X, Y = X.to(args.device), Y.to(args.device)
        with torch.autocast(device_type=args.device, dtype=torch.float16):
            logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if args.max_steps >= 0 and step >= args.max_steps:
            break
