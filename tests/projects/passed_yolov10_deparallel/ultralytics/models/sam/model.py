from ultralytics.models.sam.modules.sam import Sam
from ultralytics.models.sam.predict import Predictor


class SAM:
    """The SAM interface: builds the float32 model and its predictor."""

    def __init__(self):
        self.model = Sam()
        self.predictor = Predictor()
        self.predictor.setup_model(self.model)

    def predict(self, points, masks):
        return self.predictor.inference(points, masks)
