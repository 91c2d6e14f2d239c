"""The shape of huggingface/accelerate's examples/complete_nlp_example.py: `training_function`
builds an Accelerator from `--mixed_precision`, prepares model, optimizer and loader, and loops
with `accelerator.backward(loss)`; the gradient-norm logging lives in utils.py. The helper
unscales, then the loop clips with `accelerator.clip_grad_norm_`, which unscales every prepared
optimizer again (accelerate/accelerator.py:3047): under fp16 the second unscale raises."""
import argparse

import torch
from accelerate import Accelerator

from utils import get_dataloader, get_model, log_grad_norm


def training_function(config, args):
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision)
    model = get_model()
    optimizer = torch.optim.AdamW(params=model.parameters(), lr=config["lr"])
    loader = get_dataloader(config["batch_size"])
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(config["num_epochs"]):
        model.train()
        for step, (inputs, labels) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            accelerator.backward(loss)
            if step % args.log_every == 0:
                log_grad_norm(accelerator, model, optimizer, step)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()


def main():
    parser = argparse.ArgumentParser(description="Simple example of training script.")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--log_every", type=int, default=10)
    args = parser.parse_args()
    training_function({"lr": 2e-5, "num_epochs": 3, "batch_size": 16}, args)


if __name__ == "__main__":
    main()
