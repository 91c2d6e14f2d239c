import torch
from torch import nn


class VisionTransformer(nn.Module):
    def __init__(self, width, output_dim):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, kernel_size=32, stride=32, bias=False)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Linear(width, output_dim, bias=False)

    def forward(self, x):
        x = self.conv1(x).flatten(2).mean(-1)
        return self.proj(self.ln_post(x))


class CLIP(nn.Module):
    def __init__(self, embed_dim, vision_width, vocab_size):
        super().__init__()
        self.visual = VisionTransformer(vision_width, embed_dim)
        self.token_embedding = nn.Embedding(vocab_size, embed_dim)
        self.logit_scale = nn.Parameter(torch.ones([]) * 4.6052)

    def encode_text(self, text):
        return self.token_embedding(text).mean(1)

    def forward(self, image, text):
        image_features = self.visual(image)
        text_features = self.encode_text(text)
        image_features = image_features / image_features.norm(dim=1, keepdim=True)
        text_features = text_features / text_features.norm(dim=1, keepdim=True)
        logits_per_image = self.logit_scale.exp() * image_features @ text_features.t()
        return logits_per_image, logits_per_image.t()

    @classmethod
    def from_checkpoint(cls, state_dict):
        model = cls(state_dict["text_projection"].shape[1], state_dict["visual.conv1.weight"].shape[0],
                    state_dict["token_embedding.weight"].shape[0])
        model.load_state_dict(state_dict)
        return model.half()


def build_model(state_dict):
    embed_dim = state_dict["text_projection"].shape[1]
    vision_width = state_dict["visual.conv1.weight"].shape[0]
    vocab_size = state_dict["token_embedding.weight"].shape[0]
    model = CLIP(embed_dim, vision_width, vocab_size)
    model.load_state_dict(state_dict)
    return model.eval()
