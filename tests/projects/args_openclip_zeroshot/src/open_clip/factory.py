from open_clip.model import CLIP

_MODEL_CONFIGS = {
    "ViT-B-32": dict(embed_dim=512, image_size=8),
    "RN50": dict(embed_dim=256, image_size=8),
}


def create_model(model_name, **kwargs):
    return CLIP(**_MODEL_CONFIGS[model_name], **kwargs)
