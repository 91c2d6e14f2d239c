import torch

from schnetpack.representation.schnet import SchNet


def main():
    model = SchNet().cuda()
    head = torch.nn.Linear(128, 1).cuda()
    optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=5e-4)
    for batch in torch.load("qm9_batches.pt"):
        batch = {k: v.cuda() for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            energy = head(model(batch)).sum()
        loss = torch.nn.functional.mse_loss(energy.float(), batch["energy"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
