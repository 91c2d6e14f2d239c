import torch

from models.transformer import ConditionalDETRDecoder


def train_one_epoch(loader, epochs=1):
    decoder = ConditionalDETRDecoder().cuda()
    optimizer = torch.optim.AdamW(decoder.parameters(), lr=1e-4, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for memory, memory_mask in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = decoder(memory.cuda(), memory_mask.cuda()).abs().mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
