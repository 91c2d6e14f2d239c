import torch


class RunnerBase:
    def __init__(self, model, optimizer, cfg, device):
        self.model = model
        self.optimizer = optimizer
        self.cfg = cfg
        self.device = device
        self.scaler = torch.amp.GradScaler("cuda", enabled=cfg.amp)

    def train_step(self, batch):
        image, text, mask, target = (t.to(self.device) for t in batch)
        with torch.autocast(device_type=self.device, dtype=torch.float16, enabled=self.cfg.amp):
            logits = self.model(image, text, mask)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten())
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()
