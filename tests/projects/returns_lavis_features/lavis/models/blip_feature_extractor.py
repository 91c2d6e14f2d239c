import torch
from torch import nn


class BlipFeatureExtractor(nn.Module):
    """Image and text towers with their projections into the shared embedding space."""

    def __init__(self, vision_width=24, text_width=20, vocab_size=100, embed_dim=16):
        super().__init__()
        self.visual_encoder = nn.Sequential(
            nn.Conv2d(3, vision_width, kernel_size=4, stride=4),
            nn.Flatten(2),
        )
        self.vision_proj = nn.Linear(vision_width, embed_dim)
        self.word_embeddings = nn.Embedding(vocab_size, text_width)
        self.text_proj = nn.Linear(text_width, embed_dim)

    @property
    def device(self):
        return next(self.parameters()).device

    def extract_image_features(self, image):
        with torch.autocast("cuda", dtype=torch.float16):
            image_embeds = self.visual_encoder(image).mean(-1)
            image_features = self.vision_proj(image_embeds)
        return image_features

    def extract_text_features(self, text_ids):
        text_embeds = self.word_embeddings(text_ids.to(self.device)).mean(1)
        return self.text_proj(text_embeds)
