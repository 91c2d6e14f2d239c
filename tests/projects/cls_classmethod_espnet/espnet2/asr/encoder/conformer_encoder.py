from torch import nn

from espnet.nets.pytorch_backend.transformer.attention import MultiHeadedAttention


class ConformerEncoder(nn.Module):
    def __init__(self, input_size, output_size=256, attention_heads=4, num_blocks=6, dropout_rate=0.1):
        super().__init__()
        self.embed = nn.Linear(input_size, output_size)
        self.attentions = nn.ModuleList(
            [MultiHeadedAttention(attention_heads, output_size, dropout_rate) for _ in range(num_blocks)])
        self.norm = nn.LayerNorm(output_size)

    def forward(self, xs_pad, masks):
        xs_pad = self.embed(xs_pad)
        for attention in self.attentions:
            xs_pad = xs_pad + attention(xs_pad, xs_pad, xs_pad, masks)
        return self.norm(xs_pad)
