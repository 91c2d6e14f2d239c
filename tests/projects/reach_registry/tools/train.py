import torch

import seg.models  # noqa: F401  (registers the models)
import seg.losses  # noqa: F401
from seg.utils.registry import LOSSES, MODELS


def main(cfg, loader):
    model = MODELS.build(cfg.model)
    criterion = LOSSES.build(cfg.loss)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for x, mask, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x, mask), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
