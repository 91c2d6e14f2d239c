import torch

from torchreid.engine import ImageSoftmaxEngine


def main(datamanager, model):
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    engine = ImageSoftmaxEngine(datamanager, model, optimizer)
    for epoch in range(60):
        engine.epoch = epoch
        engine.train()


if __name__ == "__main__":
    main(None, None)
