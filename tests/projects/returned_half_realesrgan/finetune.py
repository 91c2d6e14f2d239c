import torch
import torch.nn.functional as F

from realesrgan import RealESRGANer


def train(args, loader):
    upsampler = RealESRGANer(args.scale, args.model_path)
    net_g = upsampler.export()
    net_g = net_g.float()
    net_g.train()
    optimizer = torch.optim.Adam(net_g.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for lq, gt in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.l1_loss(net_g(lq), gt)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
