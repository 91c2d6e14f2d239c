"""The shape of accelerate's examples/nlp_example.py (huggingface/accelerate: `training_function`
builds an Accelerator from `--mixed_precision`, prepares model/optimizer/loaders and loops with
`accelerator.backward(loss)`), with the gradient-norm logging of
examples/by_feature/gradient_accumulation.py-style scripts factored into a helper of the file:
`log_grad_norm` unscales, then the loop clips with `accelerator.clip_grad_norm_`, which unscales
every prepared optimizer again (accelerate/accelerator.py:3047)."""
import argparse

import torch
from accelerate import Accelerator

from utils import get_dataloaders, get_model

MAX_GRAD_NORM = 1.0


def log_grad_norm(accelerator, model, optimizer, step):
    accelerator.unscale_gradients(optimizer=optimizer)
    norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    accelerator.print(f"step {step}: grad norm {norm.item():.3f}")


def training_function(config, args):
    accelerator = Accelerator(cpu=args.cpu, mixed_precision=args.mixed_precision)
    model = get_model()
    optimizer = torch.optim.AdamW(params=model.parameters(), lr=config["lr"])
    train_dataloader, eval_dataloader = get_dataloaders(accelerator, config["batch_size"])
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader
    )
    for epoch in range(config["num_epochs"]):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            if step % args.log_every == 0:
                log_grad_norm(accelerator, model, optimizer, step)
            accelerator.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
            optimizer.step()
            optimizer.zero_grad()


def main():
    parser = argparse.ArgumentParser(description="Simple example of training script.")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--log_every", type=int, default=10)
    args = parser.parse_args()
    config = {"lr": 2e-5, "num_epochs": 3, "seed": 42, "batch_size": 16}
    training_function(config, args)


if __name__ == "__main__":
    main()
