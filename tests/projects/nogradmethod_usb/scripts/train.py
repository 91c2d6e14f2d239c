import torch
import torchvision

from semilearn.algorithms.fixmatch import FixMatch


def main():
    model = torchvision.models.resnet18(num_classes=10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    algorithm = FixMatch(model, optimizer)
    algorithm.train(1000)


if __name__ == "__main__":
    main()
