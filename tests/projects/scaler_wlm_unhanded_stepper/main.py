import argparse
import math

import torch
import torch.nn as nn

import model
from utils import ClippedStepper, repackage_hidden

parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 RNN/LSTM Language Model')
parser.add_argument('--lr', type=float, default=20)
parser.add_argument('--clip', type=float, default=0.25)
parser.add_argument('--epochs', type=int, default=40)
parser.add_argument('--bptt', type=int, default=35)
args = parser.parse_args()

device = torch.device("cuda")
train_data = torch.load('wikitext2_train.pt').to(device)
ntokens = 33278
net = model.RNNModel(ntokens, 200, 200, 2).to(device)
criterion = nn.NLLLoss()


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def train(optimizer):
    net.train()
    stepper = ClippedStepper(net, optimizer, args.clip)
    hidden = None
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden) if hidden is not None else None
        with torch.autocast(device.type, dtype=torch.bfloat16):
            output, hidden = net(data, hidden)
            loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        stepper.step()
        if batch % 200 == 0:
            print('| batch {:5d} | loss {:5.2f} | ppl {:8.2f}'.format(batch, loss.item(), math.exp(loss.item())))


optimizer = torch.optim.SGD(net.parameters(), lr=args.lr)
for epoch in range(1, args.epochs + 1):
    train(optimizer)
