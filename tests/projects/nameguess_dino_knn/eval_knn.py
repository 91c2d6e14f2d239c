import torch

from vision_transformer import VisionTransformer


@torch.no_grad()
def extract_features(model, data_loader, num_samples, dim):
    with torch.autocast("cuda"):
        features = torch.zeros(num_samples, dim, device="cuda")
        for samples, index in data_loader:
            feats = model(samples.cuda(non_blocking=True)).clone()
            features.index_copy_(0, index.cuda(non_blocking=True), feats)
    return features


class FeatureBank:
    def __init__(self, num_samples, dim=64):
        self.model = VisionTransformer(embed_dim=dim)
        self.num_samples = num_samples
        self.dim = dim

    @torch.no_grad()
    def extract(self, data_loader):
        with torch.autocast("cuda"):
            features = torch.zeros(self.num_samples, self.dim, device="cuda")
            for samples, index in data_loader:
                feats = self.model(samples.cuda(non_blocking=True)).clone()
                features.index_copy_(0, index.cuda(non_blocking=True), feats)
        return features
