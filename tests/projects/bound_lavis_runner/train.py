import torch

from lavis.common.config import RunConfig
from lavis.common.dist_utils import get_device
from lavis.models.blip_head import Exporter, ITMHead
from lavis.runners.runner_base import RunnerBase


def main(loader):
    cfg = RunConfig()
    model = ITMHead(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    runner = RunnerBase(model, optimizer, cfg, device=get_device())
    for epoch in range(3):
        for batch in loader:
            runner.train_step(batch)


def finetune_fp16(loader):
    cfg = RunConfig()
    head = Exporter(ITMHead(cfg)).fp16()
    optimizer = torch.optim.SGD(head.parameters(), lr=cfg.lr)
    for image, text, mask, target in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            logits = head(image, text, mask)
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten()).backward()
        optimizer.step()


if __name__ == "__main__":
    main([])
