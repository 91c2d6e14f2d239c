import torch

from gpt2.modeling import GPT2ValueHead


def main(batches, steps=100):
    head = GPT2ValueHead(768).cuda()
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-4)
    scaler = torch.cuda.amp.GradScaler()
    for _ in range(steps):
        hidden = next(batches).cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = -head(hidden).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
