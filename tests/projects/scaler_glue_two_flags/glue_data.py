import csv
import os

import torch
from torch.utils.data import TensorDataset


def read_tsv(path):
    with open(path, encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter="\t"))[1:]


def build_features(task, tokenizer, split, max_length=128):
    rows = read_tsv(os.path.join("glue_data", task, f"{split}.tsv"))
    encoded = tokenizer([r[0] for r in rows], max_length=max_length, padding="max_length",
                        truncation=True, return_tensors="pt")
    labels = torch.tensor([int(r[-1]) for r in rows], dtype=torch.long)
    return TensorDataset(encoded["input_ids"], encoded["attention_mask"], labels)
