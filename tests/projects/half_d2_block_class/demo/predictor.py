import torch

from detectron2.engine.defaults import DefaultPredictor


class VisualizationDemo:
    def __init__(self, cfg, fp16=False):
        self.predictor = DefaultPredictor(cfg)
        if fp16:
            self.predictor.model.half()

    def run_on_image(self, image):
        return self.predictor(image)
