import torch

from engine import train_one_epoch


def main():
    backbone = torch.nn.Linear(32, 256).cuda()
    optimizer = torch.optim.AdamW(backbone.parameters(), lr=1e-4)
    loader = [(torch.randn(2, 100, 32).cuda(), torch.rand(2, 100) > 0.5) for _ in range(4)]
    train_one_epoch(backbone, loader, optimizer)


if __name__ == "__main__":
    main()
