"""Trains a small GPT built from flash_attn's fused ops: the model is written out in this one
script (MHA, Mlp, Block, GPTModel as in flash_attn.models.gpt / flash_attn.modules)."""

import math
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

from flash_attn.ops.fused_dense import fused_dense_func


class MHA(nn.Module):
    def __init__(self, embed_dim, num_heads, max_seqlen=1024):
        super().__init__()
        self.num_heads = num_heads
        self.Wqkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.register_buffer("causal_mask", torch.tril(torch.ones(max_seqlen, max_seqlen, dtype=torch.bool)))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.Wqkv(x).view(b, s, 3, self.num_heads, d // self.num_heads).transpose(1, 3).unbind(dim=1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.num_heads)
        scores = scores.masked_fill(~self.causal_mask[:s, :s], -1e9)
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, d))


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features=None):
        super().__init__()
        hidden_features = hidden_features or 4 * in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, dim, mixer_cls, mlp_cls):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.mixer = mixer_cls(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = mlp_cls(dim)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.mixer(self.norm1(hidden_states))
        return hidden_states + self.mlp(self.norm2(hidden_states))


def create_block(d_model, n_head, layer_idx=None):
    mixer_cls = partial(MHA, num_heads=n_head)
    mlp_cls = partial(Mlp, hidden_features=4 * d_model)
    return Block(d_model, mixer_cls, mlp_cls)


class GPTModel(nn.Module):
    def __init__(self, vocab_size, d_model, n_layer, n_head):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, d_model)
        self.layers = nn.ModuleList([create_block(d_model, n_head, layer_idx=i) for i in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.embeddings(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return fused_dense_func(self.ln_f(hidden_states), self.lm_head.weight)


def main():
    model = GPTModel(50257, 768, 12, 12).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(torch.load("openwebtext_batches.pt")):
        lr = 6e-4 * 0.5 * (1 + math.cos(math.pi * step / 10000))
        for group in optimizer.param_groups:
            group["lr"] = lr
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(x.cuda())
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.cuda().view(-1))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
