from lavis.models.blip_feature_extractor import BlipFeatureExtractor


def load_model(name, model_type="base", is_eval=True, device="cpu"):
    if name != "blip_feature_extractor":
        raise ValueError(f"unknown model {name}")
    model = BlipFeatureExtractor(embed_dim=16 if model_type == "base" else 32)
    if is_eval:
        model.eval()
    return model.to(device)
