import torch

from ultralytics.nn.tasks import DetectionModel
from ultralytics.utils.torch_utils import de_parallel


class Exporter:
    def __call__(self, model=None):
        model = model or DetectionModel()
        half_model = de_parallel(model).half()  # TensorRT engine in FP16
        im = torch.zeros(1, 3, 64, 64, dtype=torch.float16)
        return half_model(im)
