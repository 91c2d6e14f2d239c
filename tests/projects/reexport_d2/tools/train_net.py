import torch

from d2lite.engine import clip_and_step, launch
from d2lite.modeling import GeneralizedRCNN, mask_rcnn_loss


def train(loader, cfg):
    model = GeneralizedRCNN(cfg["num_classes"]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    scaler = torch.amp.GradScaler("cuda")
    for images, gt_classes, mask_logits, gt_masks in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(images, gt_classes) + mask_rcnn_loss(mask_logits, gt_masks)
        scaler.scale(loss).backward()
        clip_and_step(scaler, optimizer, model.parameters(), 1.0)
        scaler.update()


if __name__ == "__main__":
    launch(train, [], {"num_classes": 3})
