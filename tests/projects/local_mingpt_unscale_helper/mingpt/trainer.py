import torch


def clip_gradients(scaler, optimizer, model, grad_norm_clip):
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm_clip)


class Trainer:
    def __init__(self, config, model, optimizer):
        self.config = config
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def run(self, batches):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16):
                logits, loss = self.model(x, y)
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            clip_gradients(self.scaler, self.optimizer, self.model, self.config.grad_norm_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
