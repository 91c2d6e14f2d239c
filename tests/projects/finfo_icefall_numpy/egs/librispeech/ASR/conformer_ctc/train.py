import argparse

import torch
import torch.nn.functional as F

from conformer import Conformer


def compute_loss(params, model, batch):
    feature, mask, targets, feature_lens, target_lens = batch
    nnet_output = model(feature.to(params.device), mask.to(params.device))
    return F.ctc_loss(nnet_output.transpose(0, 1), targets, feature_lens, target_lens, reduction="sum")


def train_one_epoch(params, model, optimizer, scaler, train_dl):
    model.train()
    for batch_idx, batch in enumerate(train_dl):
        with torch.autocast("cuda", enabled=params.use_fp16):
            loss = compute_loss(params, model, batch)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def run(params):
    model = Conformer(num_features=80, num_classes=500).to(params.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=params.use_fp16)
    for epoch in range(params.num_epochs):
        train_one_epoch(params, model, optimizer, scaler, torch.load(f"data/fbank/cuts_train.{epoch}.pt"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--use-fp16", action="store_true")
    params = parser.parse_args()
    params.device = torch.device("cuda", 0)
    run(params)


if __name__ == "__main__":
    main()
