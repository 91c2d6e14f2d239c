""" Feature extraction helpers for linear probing and retrieval benchmarks.

The caller (a notebook, a separate probing package) builds the model with `timm.create_model`
and passes it in.
"""
import torch


@torch.no_grad()
def extract_features(model, loader, device='cuda', patch_mask=None):
    model.eval()
    feats = []
    for images, _ in loader:
        images = images.to(device, non_blocking=True)
        with torch.autocast('cuda', dtype=torch.float16):
            x = model.forward_features(images, patch_mask)
            x = model.forward_head(x, pre_logits=True)
        feats.append(x.float().cpu())
    return torch.cat(feats)
