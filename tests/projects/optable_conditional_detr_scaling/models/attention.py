import torch


def multi_head_attention_forward(query, key, value, query_pos, num_heads, attn_mask):
    """Cross-attention of the object queries to the encoder memory (L, N, C), with the
    positional query embedding added to the content query; attn_mask: (N * heads, Lq, Lk)."""
    tgt_len, bsz, embed_dim = query.size()
    head_dim = embed_dim // num_heads
    scaling = float(head_dim) ** -0.5
    q = (query + query_pos).contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = key.contiguous().view(-1, bsz * num_heads, head_dim).transpose(0, 1)
    v = value.contiguous().view(-1, bsz * num_heads, head_dim).transpose(0, 1)
    attn_output_weights = torch.bmm(q, k.transpose(1, 2)) * scaling
    attn_output_weights = attn_output_weights.masked_fill(attn_mask, torch.finfo(query_pos.dtype).min)
    attn_output = torch.bmm(attn_output_weights.softmax(dim=-1), v)
    return attn_output.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
