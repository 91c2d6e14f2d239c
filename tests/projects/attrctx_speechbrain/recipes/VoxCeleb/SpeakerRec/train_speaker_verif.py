#!/usr/bin/env python3
"""Speaker verification: a binary same/different-speaker head on top of an embedding model."""
import sys

import torch

import speechbrain as sb
from speechbrain.nnet.losses import bce_loss


class SpeakerBrain(sb.Brain):
    def compute_forward(self, batch, stage):
        feats = self.modules.compute_features(batch["wav"].to(self.device))
        embeddings = self.modules.embedding_model(feats)
        return self.modules.classifier(embeddings)

    def fit_batch(self, batch):
        with self.autocast:
            logits = self.compute_forward(batch, "train")
            loss = bce_loss(torch.sigmoid(logits), batch["same"].to(self.device))
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return loss.detach().item()


if __name__ == "__main__":
    hparams = torch.load(sys.argv[1])
    brain = SpeakerBrain(hparams["modules"], hparams["opt_class"], hparams)
    brain.fit(hparams["epochs"], hparams["train_set"])
