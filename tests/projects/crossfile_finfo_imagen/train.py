import torch
import torch.nn.functional as F

from imagen_pytorch import Unet

unet = Unet(dim=128).cuda()
optim = torch.optim.Adam(unet.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")

for step in range(100):
    images = torch.randn(4, 3, 64, 64, device="cuda")
    text_embeds = torch.randn(4, 77, 512, device="cuda")
    text_mask = torch.ones(4, 77, 64 * 64, dtype=torch.bool, device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        pred = unet(images, text_embeds, text_mask=text_mask)
        loss = F.mse_loss(pred, images)
    scaler.scale(loss).backward()
    scaler.step(optim)
    scaler.update()
    optim.zero_grad()
