import torch
import torch.nn.functional as F

from x_transformers import TransformerWrapper

model = TransformerWrapper(num_tokens=256, dim=512, depth=6).cuda()
optim = torch.optim.Adam(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")

for step in range(100):
    seq = torch.randint(0, 256, (4, 1024), device="cuda")
    mask = torch.ones(4, 1024, 1024, dtype=torch.bool, device="cuda").tril()
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(seq[:, :-1], mask=mask[:, :-1, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), seq[:, 1:])
    scaler.scale(loss).backward()
    scaler.step(optim)
    scaler.update()
    optim.zero_grad()
