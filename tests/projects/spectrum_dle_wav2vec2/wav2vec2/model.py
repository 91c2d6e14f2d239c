import torch.nn as nn

from common.features import SpectrogramFeatures


class Wav2Vec2Model(nn.Module):
    def __init__(self, dim=80):
        super().__init__()
        self.spec_feature_extractor = SpectrogramFeatures(n_mels=dim)
        self.encoder = nn.Linear(dim, dim)

    def forward(self, source):
        feats = self.spec_feature_extractor(source)
        return self.encoder(feats.transpose(1, 2))
