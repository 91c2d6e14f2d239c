import sys

import torch
import yaml

from llmfoundry.models.mpt import MPTForCausalLM
from llmfoundry.utils.builders import build_optimizer, build_precision_context


def main(cfg):
    device = torch.device("cuda")
    model = MPTForCausalLM().to(device)
    optimizer = build_optimizer(model, cfg["optimizer"].pop("name"), cfg["optimizer"])
    precision_ctx = build_precision_context(cfg["precision"])
    scaler = torch.amp.GradScaler("cuda")
    for step, batch in enumerate(torch.load(cfg["train_loader_path"])):
        batch = {k: v.to(device) for k, v in batch.items()}
        optimizer.zero_grad(set_to_none=True)
        with precision_ctx():
            logits = model(batch["input_ids"])
            loss = model.loss(logits, batch)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"[batch={step + 1}]: loss {loss.item():.4f}")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        main(yaml.safe_load(f))
