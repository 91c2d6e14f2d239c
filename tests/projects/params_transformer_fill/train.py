import torch

from transformer.Models import Encoder


def train_epoch(model, training_data, optimizer):
    model.train()
    for src_seq, target in training_data:
        src_mask = (src_seq != 0).unsqueeze(-2)
        with torch.autocast("cpu", dtype=torch.float16):
            pred = model(src_seq, src_mask)
            loss = torch.nn.functional.mse_loss(pred.float(), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    model = Encoder(n_src_vocab=100)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    data = [(torch.randint(0, 100, (2, 8)), torch.randn(2, 8, 32))]
    train_epoch(model, data, optimizer)


if __name__ == "__main__":
    main()
