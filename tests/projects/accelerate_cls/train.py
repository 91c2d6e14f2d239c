import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

from modeling import MultiLabelHead


def main(dataset, epochs=3):
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=2)
    model = MultiLabelHead()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    for _ in range(epochs):
        for features, labels in loader:
            with accelerator.accumulate(model):
                loss, _ = model(features, labels)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
