import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from deepspeed.runtime.engine import DeepSpeedEngine


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(6 * 14 * 14, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        return self.fc(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--fp16_enabled", action="store_true")
    args = parser.parse_args()
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    engine = DeepSpeedEngine(net, args, optimizer=optimizer)
    criterion = nn.CrossEntropyLoss()
    for inputs, labels in torch.load("cifar_batches.pt"):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(engine(inputs.cuda()), labels.cuda())
        loss.backward()
        engine.step()


if __name__ == "__main__":
    main()
