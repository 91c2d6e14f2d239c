"""Data and model helpers of the accelerate-style example (no scaler protocol here)."""
import torch
from torch.utils.data import DataLoader, TensorDataset


class TinyClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 2)

    def forward(self, input_ids, labels):
        logits = self.linear(input_ids)
        return type("Out", (), {"loss": torch.nn.functional.cross_entropy(logits, labels)})


def get_model():
    return TinyClassifier()


def get_dataloaders(accelerator, batch_size):
    data = TensorDataset(torch.randn(64, 16), torch.randint(0, 2, (64,)))
    with accelerator.main_process_first():
        train = DataLoader(data, batch_size=batch_size, shuffle=True,
                           collate_fn=lambda b: {"input_ids": torch.stack([x for x, _ in b]),
                                                 "labels": torch.stack([y for _, y in b])})
    return train, train
