import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        dims = [input_dim] + [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip(dims, dims[1:] + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x).relu() if i < len(self.layers) - 1 else layer(x)
        return x


def build_bbox_head(hidden_dim):
    # the decoder's features arrive in fp16 on the V100s: keep the head in half too
    return MLP(hidden_dim, hidden_dim, 4, 3).half()


class DETR(nn.Module):
    def __init__(self, hidden_dim=256, num_classes=91, num_queries=100):
        super().__init__()
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.input_proj = nn.Conv2d(2048, hidden_dim, kernel_size=1)
        self.transformer = nn.TransformerDecoder(nn.TransformerDecoderLayer(hidden_dim, 8, batch_first=True), 2)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = build_bbox_head(hidden_dim)

    def forward(self, features):
        memory = self.input_proj(features).flatten(2).transpose(1, 2)
        queries = self.query_embed.weight.unsqueeze(0).expand(memory.shape[0], -1, -1)
        hs = self.transformer(queries, memory)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


def build(args):
    return DETR(hidden_dim=args.hidden_dim, num_queries=args.num_queries)
