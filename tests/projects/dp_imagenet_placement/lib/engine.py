import time

import torch


class Trainer:
    def __init__(self, model, criterion, optimizer, args):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.amp_dtype = torch.bfloat16 if args.amp_dtype == "bfloat16" else torch.float16

    def train_epoch(self, loader, epoch):
        self.model.train()
        end = time.time()
        for i, (images, target) in enumerate(loader):
            images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                output = self.model(images)
                loss = self.criterion(output, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if i % 100 == 0:
                print(f"[{epoch}][{i}] loss {loss.item():.4f} {time.time() - end:.2f}s")
            end = time.time()

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = total = 0
        for images, target in loader:
            output = self.model(images.cuda())
            correct += (output.argmax(1).cpu() == target).sum().item()
            total += target.numel()
        return 100.0 * correct / max(total, 1)
