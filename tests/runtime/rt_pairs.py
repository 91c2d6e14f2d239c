"""Small before/after pairs following the runnable-fixture contract, one per hazard the monitor
knows; tests write them into tmp dirs as ``<CODE>/<case>.py`` + ``<case>.fixed.py``."""

COMMON = '''
import torch
import torch.nn.functional as F
from torch import nn


def region(device, dtype):
    return torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None)


class MLP(nn.Module):
    def __init__(self, d_in=8, d_hidden=16, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def grads(model):
    return {f"grad.{n}": p.grad for n, p in model.named_parameters() if p.grad is not None}
'''

PAIRS = {
    "AMP101": ("""
class Scatter(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP()

    def forward(self, x, idx):
        h = self.mlp(x)
        out = torch.zeros(x.shape[0], 4, device=x.device)
        out[idx] = h[idx]
        return out
""", """
class Scatter(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = MLP()

    def forward(self, x, idx):
        h = self.mlp(x)
        out = h.new_zeros(x.shape[0], 4)
        out[idx] = h[idx]
        return out
""", """
def amplint_run(device, dtype):
    torch.manual_seed(0)
    model = Scatter().to(device)
    x = torch.randn(6, 8, device=device)
    idx = torch.tensor([0, 2, 5], device=device)
    with region(device, dtype):
        out = model(x, idx)
    loss = out.float().pow(2).mean()
    loss.backward()
    return {"out": out, "loss": loss, **grads(model)}
"""),
    "AMP102": ("""
def step(model, x, y, device, dtype):
    with region(device, dtype):
        p = torch.sigmoid(model(x))
        loss = F.binary_cross_entropy(p, y)
    return loss
""", """
def step(model, x, y, device, dtype):
    with region(device, dtype):
        loss = F.binary_cross_entropy_with_logits(model(x), y)
    return loss
""", """
def amplint_run(device, dtype):
    torch.manual_seed(0)
    model = MLP(d_out=1).to(device)
    x = torch.randn(16, 8, device=device)
    y = torch.rand(16, 1, device=device)
    loss = step(model, x, y, device, dtype)
    loss.backward()
    return {"loss": loss, **grads(model)}
"""),
    "AMP103": ("""
def prepare(model, x, dtype):
    if dtype is not None:
        model = model.half()
        x = x.half()
    return model, x
""", """
def prepare(model, x, dtype):
    return model, x
""", """
def amplint_run(device, dtype):
    torch.manual_seed(0)
    model, x = prepare(MLP().to(device), torch.randn(16, 8, device=device), dtype)
    target = torch.randn(16, 4, device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device, enabled=dtype == torch.float16)
    with region(device, dtype):
        out = model(x)
        loss = F.mse_loss(out.float(), target)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    result = {"loss": loss, **{k: v.clone() for k, v in grads(model).items()}}
    scaler.step(opt)
    scaler.update()
    result["fc1.weight.after_step"] = model.fc1.weight
    return result
"""),
    "AMP104": ("""
def step(model, x, target, device, dtype):
    with region(device, dtype):
        loss = F.mse_loss(model(x).float(), target)
        loss.backward()
    return loss
""", """
def step(model, x, target, device, dtype):
    with region(device, dtype):
        loss = F.mse_loss(model(x).float(), target)
    loss.backward()
    return loss
""", """
def amplint_run(device, dtype):
    torch.manual_seed(0)
    model = MLP().to(device)
    x = torch.randn(16, 8, device=device)
    target = torch.randn(16, 4, device=device)
    loss = step(model, x, target, device, dtype)
    return {"loss": loss, **grads(model)}
"""),
    "AMP110": ("""
def attend(q, k, v, mask):
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(mask, -1e9)
    return torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v
""", """
def attend(q, k, v, mask):
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores.float(), dim=-1).to(v.dtype) @ v
""", """
def amplint_run(device, dtype):
    torch.manual_seed(0)
    proj = nn.Linear(8, 24).to(device)
    x = torch.randn(2, 5, 8, device=device)
    mask = torch.ones(5, 5, device=device).triu(1).bool()
    with region(device, dtype):
        q, k, v = proj(x).chunk(3, dim=-1)
        out = attend(q, k, v, mask)
    loss = out.float().pow(2).mean()
    loss.backward()
    return {"out": out, "loss": loss, **grads(proj)}
"""),
}


def write_pair(root, code, case="case"):
    """Write ``root/<code>/<case>.py`` and ``<case>.fixed.py``; return the folder."""
    before, after, run = PAIRS[code]
    folder = root / code
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{case}.py").write_text(COMMON + before + run)
    (folder / f"{case}.fixed.py").write_text(COMMON + after + run)
    return folder
