import torch
from torch import nn

from .attention import multi_head_attention_forward


class TransformerDecoderLayer(nn.Module):
    def __init__(self, d_model, nhead):
        super().__init__()
        self.nhead = nhead
        self.ca_qcontent_proj = nn.Linear(d_model, d_model)
        self.ca_kcontent_proj = nn.Linear(d_model, d_model)
        self.ca_v_proj = nn.Linear(d_model, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tgt, memory, memory_mask, query_pos):
        tgt2 = multi_head_attention_forward(self.ca_qcontent_proj(tgt), self.ca_kcontent_proj(memory),
                                            self.ca_v_proj(memory), query_pos, self.nhead, memory_mask)
        return self.norm(tgt + tgt2)


class ConditionalDETRDecoder(nn.Module):
    def __init__(self, num_queries=300, d_model=256, nhead=8):
        super().__init__()
        self.query_embed = nn.Embedding(num_queries, d_model)
        self.layer = TransformerDecoderLayer(d_model, nhead)

    def forward(self, memory, memory_mask):
        query_pos = self.query_embed.weight.unsqueeze(1).repeat(1, memory.shape[1], 1)
        tgt = torch.zeros_like(query_pos)
        return self.layer(tgt, memory, memory_mask, query_pos)
