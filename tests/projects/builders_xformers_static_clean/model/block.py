import torch
import torch.nn as nn

from ops.swiglu import swiglu


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w12 = nn.Parameter(torch.randn(2 * hidden, dim) * 0.02)
        self.w3 = nn.Parameter(torch.randn(dim, hidden) * 0.02)

    def forward(self, x):
        return swiglu(x, self.w12, self.w3)


def train(loader, dim=64, hidden=256):
    model = FeedForward(dim, hidden).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch.cuda()).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
