from .attn_head import AttnHead
