'''This script handles the training process, with AMP added.'''
import argparse

import torch
import torch.nn.functional as F
import torch.optim as optim

from transformer.Models import Transformer
from transformer.Optim import ScheduledOptim


def train_epoch(model, training_data, optimizer, scaler, opt, device):
    model.train()
    total_loss = 0
    for src_seq, trg_seq in training_data:
        src_seq = src_seq.to(device)
        trg_seq, gold = trg_seq[:, :-1].to(device), trg_seq[:, 1:].contiguous().view(-1).to(device)
        optimizer.zero_grad()
        with torch.autocast('cuda', enabled=opt.amp):
            pred = model(src_seq, trg_seq)
            loss = F.cross_entropy(pred, gold, reduction='sum')
        scaler.scale(loss).backward()
        optimizer.step_and_update_lr()
        total_loss += loss.item()
    return total_loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('-epoch', type=int, default=10)
    parser.add_argument('-d_model', type=int, default=512)
    parser.add_argument('-lr_mul', type=float, default=2.0)
    parser.add_argument('-warmup', '--n_warmup_steps', type=int, default=4000)
    parser.add_argument('-amp', action='store_true')
    opt = parser.parse_args()
    device = torch.device('cuda')
    training_data = torch.load('train.pt')
    transformer = Transformer(9521, 9521, d_model=opt.d_model).to(device)
    optimizer = ScheduledOptim(optim.Adam(transformer.parameters(), betas=(0.9, 0.98), eps=1e-09),
                               opt.lr_mul, opt.d_model, opt.n_warmup_steps)
    scaler = torch.amp.GradScaler('cuda', enabled=opt.amp)
    for epoch_i in range(opt.epoch):
        train_loss = train_epoch(transformer, training_data, optimizer, scaler, opt, device)
        print(f'epoch {epoch_i}: loss {train_loss:8.5f}')


if __name__ == '__main__':
    main()
