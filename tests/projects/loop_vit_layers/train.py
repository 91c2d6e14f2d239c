import torch
import torch.nn.functional as F

from vit_pytorch import ViT


def main(loader, epochs=10):
    model = ViT(patch_dim=768, num_classes=1000, dim=512, depth=6, heads=8, mlp_dim=1024).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for patches, mask, labels in loader:
            patches, mask, labels = patches.cuda(), mask.cuda(), labels.cuda()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(patches, mask), labels)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
