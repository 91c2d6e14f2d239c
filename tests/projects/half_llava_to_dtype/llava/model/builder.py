import torch

from llava.model.multimodal_encoder.builder import build_vision_tower


def load_pretrained_model(model_cfg, device_map="auto", device="cuda"):
    vision_tower = build_vision_tower(model_cfg)
    if device_map != "auto":
        vision_tower.to(device=device_map, dtype=torch.float16)
    image_processor = getattr(vision_tower, "image_processor", None)
    return vision_tower, image_processor
