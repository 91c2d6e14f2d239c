from onmt.modules.multi_headed_attn import MultiHeadedAttention

__all__ = ["MultiHeadedAttention"]
