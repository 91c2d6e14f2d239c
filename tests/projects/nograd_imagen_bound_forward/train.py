import torch

from imagen_lite import ElucidatedDiffusion, TinyUnet


def train(loader, steps, fp16=True):
    diffusion = ElucidatedDiffusion(TinyUnet(self_cond=True)).cuda()
    optimizer = torch.optim.Adam(diffusion.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=fp16)
    for step, images in zip(range(steps), loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
            loss = diffusion(images.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
