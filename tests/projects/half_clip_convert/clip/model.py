import torch
import torch.nn.functional as F
from torch import nn


class TextEncoder(nn.Module):
    def __init__(self, vocab_size, width, embed_dim):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

    def forward(self, text):
        x = self.ln_final(self.token_embedding(text).mean(dim=1))
        return x @ self.text_projection


class ImageEncoder(nn.Module):
    def __init__(self, width, patch_size, embed_dim):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, kernel_size=patch_size, stride=patch_size, bias=False)
        self.proj = nn.Linear(width, embed_dim, bias=False)

    def forward(self, image):
        return self.proj(self.conv1(image).flatten(2).mean(dim=2))


class CLIP(nn.Module):
    def __init__(self, embed_dim, vocab_size, width, patch_size):
        super().__init__()
        self.visual = ImageEncoder(width, patch_size, embed_dim)
        self.text = TextEncoder(vocab_size, width, embed_dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.6592))

    def forward(self, image, text):
        image_features = F.normalize(self.visual(image.type(self.visual.conv1.weight.dtype)), dim=-1)
        text_features = F.normalize(self.text(text), dim=-1)
        logits = self.logit_scale.exp() * image_features @ text_features.t()
        return logits, logits.t()


def convert_weights(model: nn.Module):
    """Keep the weights in fp16 to halve the download's memory."""
    model.half()


def build_model(config: dict):
    model = CLIP(config["embed_dim"], config["vocab_size"], config["width"], config["patch_size"])
    convert_weights(model)
    return model.eval()
