import torch

from mmdet.models import SingleStageDetector


def train_detector(data_loader, max_epochs=12):
    model = SingleStageDetector(in_channels=64, num_classes=80).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for _ in range(max_epochs):
        for img, gt_labels in data_loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                losses = model.forward_train(img, gt_labels)
                loss = sum(sum(v) for v in losses.values())
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
