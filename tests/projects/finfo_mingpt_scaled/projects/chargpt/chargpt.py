"""Trains a character-level GPT on a text file."""
import sys

import torch
from torch.utils.data import Dataset

from mingpt.model import GPT
from mingpt.trainer import Trainer


class CharDataset(Dataset):
    def __init__(self, data, block_size):
        chars = sorted(set(data))
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.vocab_size = len(chars)
        self.block_size = block_size
        self.data = data

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        chunk = self.data[idx:idx + self.block_size + 1]
        dix = [self.stoi[s] for s in chunk]
        return torch.tensor(dix[:-1], dtype=torch.long), torch.tensor(dix[1:], dtype=torch.long)


if __name__ == "__main__":
    text = open(sys.argv[1]).read()
    dataset = CharDataset(text, block_size=128)
    model = GPT(dataset.vocab_size, dataset.block_size)
    Trainer(model, dataset).run()
