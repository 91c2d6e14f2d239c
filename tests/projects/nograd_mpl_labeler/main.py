import argparse

import torch
import torch.nn.functional as F

from models import WideResNet
from utils import AverageMeter, PseudoLabeler


def train_loop(args, labeled_loader, unlabeled_loader, student_model, s_optimizer, scaler, labeler):
    losses = AverageMeter()
    student_model.train()
    for (images_l, targets), (images_uw, images_us) in zip(labeled_loader, unlabeled_loader):
        images_l, targets = images_l.cuda(), targets.cuda()
        images_uw, images_us = images_uw.cuda(), images_us.cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            hard_labels, mask = labeler(images_uw)
            logits_l = student_model(images_l)
            logits_us = student_model(images_us)
            loss = F.cross_entropy(logits_l, targets) + (F.cross_entropy(logits_us, hard_labels, reduction="none") * mask).mean()
        s_optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(s_optimizer)
        scaler.update()
        losses.update(loss.item(), images_l.size(0))
    return losses.sum / max(losses.count, 1)


def main():
    parser = argparse.ArgumentParser(description="Meta Pseudo Labels")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--threshold", type=float, default=0.95)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    teacher_model = WideResNet(num_classes=10).cuda()
    student_model = WideResNet(num_classes=10).cuda()
    s_optimizer = torch.optim.SGD(student_model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scaler = torch.amp.GradScaler("cuda")
    labeler = PseudoLabeler(student_model, args.threshold)
    labeled_loader, unlabeled_loader = torch.load("loaders.pt")
    teacher_model.load_state_dict(torch.load("teacher.pt"))
    for epoch in range(args.epochs):
        train_loop(args, labeled_loader, unlabeled_loader, student_model, s_optimizer, scaler, labeler)


if __name__ == "__main__":
    main()
