import torch


def masked_max(vector, mask, dim, keepdim=False, min_val=-1e7):
    replaced_vector = vector.masked_fill(~mask, min_val)
    max_value, _ = replaced_vector.max(dim=dim, keepdim=keepdim)
    return max_value


def get_text_field_mask(tokens):
    return tokens != 0


def max_pool(vector, mask, dim):
    return masked_max(vector, mask, dim)
