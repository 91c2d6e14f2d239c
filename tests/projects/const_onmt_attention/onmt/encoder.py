import torch.nn as nn

from onmt.modules import MultiHeadedAttention


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, heads, d_ff, dropout):
        super().__init__()
        self.self_attn = MultiHeadedAttention(heads, d_model, dropout=dropout)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, inputs, mask):
        input_norm = self.layer_norm(inputs)
        out = self.self_attn(input_norm, input_norm, input_norm, mask=mask) + inputs
        return self.feed_forward(out) + out


class TransformerEncoder(nn.Module):
    def __init__(self, num_layers, d_model, heads, d_ff, dropout, vocab_size):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, d_model)
        self.transformer = nn.ModuleList(
            [TransformerEncoderLayer(d_model, heads, d_ff, dropout) for _ in range(num_layers)])

    def forward(self, src, pad_idx=1):
        mask = src.eq(pad_idx).unsqueeze(1)
        out = self.embeddings(src)
        for layer in self.transformer:
            out = layer(out, mask)
        return out
