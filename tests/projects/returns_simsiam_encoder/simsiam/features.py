import torch


def extract_features(model, images, use_amp=True):
    """The frozen encoder's features, computed in half precision."""
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        return model.encoder(images)
