import torch
from torch import nn


class PooledClassifier(nn.Module):
    def __init__(self, hidden_size=768, num_labels=28):
        super().__init__()
        self.pre_classifier = nn.Linear(hidden_size, hidden_size)
        self.classifier = nn.Linear(hidden_size, num_labels)

    def forward(self, features, labels=None):
        logits = self.classifier(torch.relu(self.pre_classifier(features.mean(dim=1))))
        if labels is None:
            return logits
        probs = torch.sigmoid(logits)
        return logits, nn.functional.binary_cross_entropy(probs, labels)
