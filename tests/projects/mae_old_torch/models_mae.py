"""A small masked autoencoder, shaped like facebookresearch/mae's models_mae.py."""
import torch
import torch.nn as nn


class MaskedAutoencoder(nn.Module):
    def __init__(self, patch_dim=12, embed_dim=16):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim)
        self.encoder = nn.Sequential(nn.Linear(embed_dim, embed_dim), nn.GELU())
        self.decoder = nn.Linear(embed_dim, patch_dim)

    def random_masking(self, x, mask_ratio):
        N, L, D = x.shape
        len_keep = int(L * (1 - mask_ratio))
        noise = torch.rand(N, L, device=x.device)  # only sorted: its dtype does not matter
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :len_keep]
        x_masked = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).repeat(1, 1, D))
        mask = torch.ones([N, L], device=x.device)
        mask[:, :len_keep] = 0
        mask = torch.gather(mask, dim=1, index=ids_restore)
        return x_masked, mask, ids_restore

    def forward(self, imgs, mask_ratio=0.75):
        x = self.patch_embed(imgs)
        x, mask, ids_restore = self.random_masking(x, mask_ratio)
        latent = self.encoder(x)
        pred = self.decoder(latent)
        target = torch.gather(imgs, 1, ids_restore[:, : pred.shape[1]].unsqueeze(-1).repeat(1, 1, imgs.shape[-1]))
        loss = ((pred - target) ** 2).mean()
        return loss, pred, mask
