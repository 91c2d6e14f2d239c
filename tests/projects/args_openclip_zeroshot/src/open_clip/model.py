import torch.nn as nn


class CLIP(nn.Module):
    def __init__(self, embed_dim=64, image_size=8, vocab_size=100):
        super().__init__()
        self.visual = nn.Sequential(nn.Flatten(), nn.Linear(3 * image_size * image_size, embed_dim))
        self.token_embedding = nn.Embedding(vocab_size, embed_dim)
        self.text_projection = nn.Linear(embed_dim, embed_dim, bias=False)

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        return self.text_projection(self.token_embedding(text).mean(dim=1))

    def forward(self, image, text):
        return self.encode_image(image), self.encode_text(text)
