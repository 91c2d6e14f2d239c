import torch

from detectron2.modeling import build_model


class DefaultPredictor:
    def __init__(self, cfg):
        self.cfg = cfg.clone()
        self.model = build_model(self.cfg)
        self.model.eval()

    def __call__(self, original_image):
        with torch.no_grad():
            image = torch.as_tensor(original_image.astype("float32").transpose(2, 0, 1))
            return self.model(image[None])
