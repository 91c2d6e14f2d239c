import torch

import speechbrain as sb


class MetricGanBrain(sb.Brain):
    def fit_batch(self, batch):
        predictions = self.compute_forward(batch, sb.Stage.TRAIN)
        loss = torch.nn.functional.mse_loss(predictions, batch)
        self.d_optimizer.zero_grad()
        loss.backward()
        self.d_optimizer.step()
        return loss.detach()

    def on_stage_start(self, stage, epoch=None):
        if stage == sb.Stage.TRAIN and self.sub_stage == "generator":
            self.train_discriminator()
            self.sub_stage = "generator"

    def train_discriminator(self):
        self.sub_stage = "current"
        self.fit(range(1), self.train_set)
        if self.historical_set:
            self.sub_stage = "historical"
            self.fit(range(1), self.historical_set)
        self.sub_stage = "current"
        self.fit(range(1), self.train_set)
