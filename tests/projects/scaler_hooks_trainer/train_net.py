"""Entry point (detectron2 tools/train_net.py shape)."""
import torch

from engine import AMPTrainer


def main():
    model = torch.nn.Linear(8, 2).cuda()
    trainer = AMPTrainer(model, [], torch.optim.SGD(model.parameters(), lr=0.01))
    trainer.train(0, 100)


if __name__ == "__main__":
    main()
