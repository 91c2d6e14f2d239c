import torch
import torch.nn.functional as F

from realesrgan.utils import build_generator


def tune(args, loader):
    net_g = build_generator(args.model_path)
    net_g = net_g.float()
    optimizer = torch.optim.Adam(net_g.parameters(), lr=1e-4)
    for lq, gt in loader:
        optimizer.zero_grad()
        loss = F.l1_loss(net_g(lq), gt)
        loss.backward()
        optimizer.step()
