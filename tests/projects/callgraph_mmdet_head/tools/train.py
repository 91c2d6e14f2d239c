import torch

from mmdet.apis import train
from mmdet.models import SingleStageDetector


def main():
    model = SingleStageDetector([256, 512], num_classes=80)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train(model, [], optimizer)


if __name__ == "__main__":
    main()
