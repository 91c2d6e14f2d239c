import torch

from ultralytics.models.yolo import YOLO


def export_fp16(weights, file="model.onnx"):
    """Exports a detector in half precision."""
    model = YOLO(weights).half()
    torch.onnx.export(model, torch.zeros(1, 3, 64, 64, dtype=torch.float16), file)
