import torch


def entrypoint(overrides):
    """`yolo predict model=...`: the model's family from its name, then one prediction."""
    model = overrides.pop("model", "yolov8n.pt")
    stem = model.lower()
    if "sam" in stem:
        from ultralytics import SAM

        model = SAM(model)
    elif "rtdetr" in stem:
        raise NotImplementedError("RT-DETR is not built from the command line")
    else:
        from ultralytics import YOLO

        model = YOLO(model, task=overrides.get("task"))
    with torch.no_grad():
        return model(overrides["source"])
