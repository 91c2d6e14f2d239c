import torch

from olmo import OLMo, TrainConfig
from olmo.train import Trainer


def main():
    cfg = TrainConfig()
    model = OLMo(cfg).cuda()
    optim = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loader = torch.utils.data.DataLoader(torch.load("data/tokens.pt"), batch_size=16)
    Trainer(cfg, model, optim, loader).fit()


if __name__ == "__main__":
    main()
