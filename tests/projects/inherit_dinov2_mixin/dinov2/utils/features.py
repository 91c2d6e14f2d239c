import torch


class FeatureExtractMixin:
    """Runs the network over the images a chunk at a time and gathers the features."""

    def extract_features(self, images, chunk=8):
        n = images.shape[0]
        feats = torch.zeros(n, self.embed_dim, device=images.device)
        for start in range(0, n, chunk):
            rows = torch.arange(start, min(start + chunk, n), device=images.device)
            feats[rows] = self(images[rows])
        return feats
