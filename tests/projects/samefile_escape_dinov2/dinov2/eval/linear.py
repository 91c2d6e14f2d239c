import torch
from torch import nn


class FeatureModel(nn.Module):
    """The frozen backbone: patch embedding and pooling, run under autocast for speed."""

    def __init__(self, embed_dim=384, patch_size=14):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, embed_dim, kernel_size=patch_size, stride=patch_size)

    def get_intermediate_layers(self, images):
        with torch.autocast("cuda", dtype=torch.float16):
            tokens = self.patch_embed(images)
        return tokens.flatten(2).mean(-1)


class LinearClassifier(nn.Module):
    def __init__(self, embed_dim=384, num_classes=1000):
        super().__init__()
        self.feature_model = FeatureModel(embed_dim)
        self.linear = nn.Linear(embed_dim, num_classes)

    def forward(self, images):
        with torch.no_grad():
            features = self.feature_model.get_intermediate_layers(images)
        return self.linear(features)


def run_eval_linear(loader, epochs=10):
    classifier = LinearClassifier().cuda()
    optimizer = torch.optim.SGD(classifier.linear.parameters(), lr=1e-3, momentum=0.9)
    for _ in range(epochs):
        for images, labels in loader:
            logits = classifier(images.cuda())
            loss = nn.functional.cross_entropy(logits, labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
