import torch
import torch.nn.functional as F
from torch.nn import Module

from fast_transformers.attention_registry import AttentionRegistry


def elu_feature_map(x):
    return F.elu(x) + 1


class LinearAttention(Module):
    """phi(Q) (phi(K)^T V) / (phi(Q) sum phi(K)), computed in float32."""

    def __init__(self, query_dimensions, feature_map=None):
        super().__init__()
        self.query_dimensions = query_dimensions
        self.feature_map = feature_map or elu_feature_map

    def forward(self, queries, keys, values, key_lengths=None):
        Q = self.feature_map(queries.float())
        K = self.feature_map(keys.float())
        if key_lengths is not None:
            K = K * key_lengths[:, :, None, None]
        KV = torch.einsum("nshd,nshm->nhmd", K, values.float())
        Z = 1 / (torch.einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + 1e-6)
        return torch.einsum("nlhd,nhmd,nlh->nlhm", Q, KV, Z).to(values.dtype).contiguous()


AttentionRegistry.register("linear", LinearAttention, ["query_dimensions", "feature_map"])
