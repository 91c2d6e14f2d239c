import torch


def window_partition(x, window_size):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window_size, window_size, C)


def attention_probs(scores):
    e = scores.exp()
    return e / e.sum(dim=-1, keepdim=True)


def rel_pos_bias(q_size, k_size, rel_pos):
    q_coords = torch.arange(q_size)[:, None]
    k_coords = torch.arange(k_size)[None, :]
    return rel_pos[(q_coords - k_coords) + (k_size - 1)]
