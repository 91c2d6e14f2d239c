import torch

from fused_lamb import FusedLAMBAMP


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


def main(loader):
    model = Head().cuda()
    model.half()
    optimizer = FusedLAMBAMP(model.parameters())
    grad_scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        grad_scaler.scale(loss).backward()
        grad_scaler.step(optimizer)
        grad_scaler.update()
        optimizer.zero_grad(set_to_none=True)
