import torch.nn as nn

from transformer.Modules import MultiHeadAttention


class EncoderLayer(nn.Module):
    def __init__(self, d_model, d_inner, n_head, d_k, d_v, dropout=0.1):
        super().__init__()
        self.slf_attn = MultiHeadAttention(n_head, d_model, d_k, d_v, dropout=dropout)
        self.pos_ffn = nn.Sequential(nn.Linear(d_model, d_inner), nn.ReLU(), nn.Linear(d_inner, d_model))

    def forward(self, enc_input, slf_attn_mask=None):
        enc_output, enc_slf_attn = self.slf_attn(enc_input, enc_input, enc_input, mask=slf_attn_mask)
        return self.pos_ffn(enc_output), enc_slf_attn


class Encoder(nn.Module):
    def __init__(self, n_src_vocab, d_model=32, n_layers=2, n_head=4, d_inner=64):
        super().__init__()
        self.src_word_emb = nn.Embedding(n_src_vocab, d_model)
        self.layer_stack = nn.ModuleList([
            EncoderLayer(d_model, d_inner, n_head, d_model // n_head, d_model // n_head)
            for _ in range(n_layers)])

    def forward(self, src_seq, src_mask):
        enc_output = self.src_word_emb(src_seq)
        for enc_layer in self.layer_stack:
            enc_output, _ = enc_layer(enc_output, slf_attn_mask=src_mask)
        return enc_output
