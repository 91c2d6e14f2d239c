import torch


class StepRunner:
    def __init__(self, net, loss_fn, accelerator=None, stage="train", optimizer=None):
        self.net, self.loss_fn, self.stage = net, loss_fn, stage
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def __call__(self, batch):
        features, mask, labels = batch
        with torch.autocast("cuda", dtype=torch.float16):
            preds = self.net(features, mask)
            loss = self.loss_fn(preds, labels)
        if self.optimizer is not None and self.stage == "train":
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
        return loss.item()


class EpochRunner:
    def __init__(self, steprunner):
        self.steprunner = steprunner

    def __call__(self, dataloader):
        losses = [self.steprunner(batch) for batch in dataloader]
        return sum(losses) / max(len(losses), 1)


class KerasModel(torch.nn.Module):
    StepRunner = StepRunner
    EpochRunner = EpochRunner

    def __init__(self, net, loss_fn, optimizer=None):
        super().__init__()
        self.net = net
        self.loss_fn = loss_fn
        self.optimizer = optimizer

    def fit(self, train_data, epochs=10):
        for _ in range(epochs):
            step_runner = self.StepRunner(net=self.net, loss_fn=self.loss_fn, optimizer=self.optimizer)
            epoch_runner = self.EpochRunner(step_runner)
            epoch_runner(train_data)
