import slowfast.models.optimizer as optim
from slowfast.models import build_model


def train(cfg, loader):
    model = build_model(cfg)
    if cfg["FP16"]:
        model.half()
    optimizer = optim.construct_optimizer(model, cfg)
    for clips, labels in loader:
        preds = model(clips.half() if cfg["FP16"] else clips)
        loss = (preds.float() - labels).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, optimizer
