from ultralytics.utils.torch_utils import de_parallel


class Predictor:
    def setup_model(self, model):
        """SAM runs in float32: the unwrapped model, put in eval mode."""
        self.model = de_parallel(model).eval()

    def inference(self, points, masks):
        return self.model(points, masks)
