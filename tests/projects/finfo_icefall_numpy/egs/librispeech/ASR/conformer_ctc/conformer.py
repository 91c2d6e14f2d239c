from torch import nn

from attention import MultiHeadedAttention


class ConformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadedAttention(nhead, d_model, dropout)
        self.norm_mha = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.SiLU(), nn.Linear(4 * d_model, d_model))
        self.norm_ff = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src, src_mask):
        h = self.norm_mha(src)
        src = src + self.dropout(self.self_attn(h, h, h, src_mask))
        return src + self.dropout(self.feed_forward(self.norm_ff(src)))


class Conformer(nn.Module):
    def __init__(self, num_features, num_classes, d_model=256, nhead=4, num_encoder_layers=12):
        super().__init__()
        self.encoder_embed = nn.Linear(num_features, d_model)
        self.encoder = nn.ModuleList([ConformerEncoderLayer(d_model, nhead) for _ in range(num_encoder_layers)])
        self.encoder_output_layer = nn.Linear(d_model, num_classes)

    def forward(self, x, mask):
        x = self.encoder_embed(x)
        for layer in self.encoder:
            x = layer(x, mask)
        return self.encoder_output_layer(x).log_softmax(-1)
