"""The loop of the split trainer (engine/steps.py holds the step): `fit` runs `train_step` for
every batch and `end_epoch` after the batches, so `scaler.update()` runs once per epoch and the
second `scaler.step` raises 'step() has already been called since the last update()'."""
import torch

from engine.steps import end_epoch, train_step


def fit(model, loader, epochs, lr=1e-3):
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for batch in loader:
            loss = train_step(model, batch, criterion, optimizer, scaler)
        end_epoch(scaler, scheduler)
        print(epoch, loss.item())


if __name__ == "__main__":
    fit(torch.nn.Linear(8, 2).cuda(), [(torch.randn(4, 8).cuda(), torch.randint(0, 2, (4,)).cuda())], 2)
