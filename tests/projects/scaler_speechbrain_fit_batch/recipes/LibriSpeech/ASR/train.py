#!/usr/bin/env python3
"""Recipe for training a CTC ASR system with LibriSpeech."""
import sys

import torch
import torch.nn.functional as F

import speechbrain as sb
from speechbrain.core import Brain, Stage


class ASR(Brain):
    def compute_forward(self, batch, stage):
        feats = self.modules.normalize(batch.feats.to(self.device))
        enc, _ = self.modules.encoder(feats)
        return F.log_softmax(self.modules.ctc_lin(enc), dim=-1)

    def compute_objectives(self, predictions, batch, stage):
        return F.ctc_loss(predictions.transpose(0, 1), batch.tokens, batch.feat_lens, batch.token_lens, blank=0)

    def fit_batch(self, batch):
        should_step = batch.index % self.hparams["grad_accumulation_factor"] == 0
        with self.training_ctx:
            outputs = self.compute_forward(batch, Stage.TRAIN)
            loss = self.compute_objectives(outputs, batch, Stage.TRAIN)
        loss = loss / self.hparams["grad_accumulation_factor"]
        loss.backward()
        if should_step:
            self.optimizers_step()
        return loss.detach().cpu()


if __name__ == "__main__":
    hparams = {"grad_accumulation_factor": 2, "epochs": 10}
    modules = {
        "normalize": torch.nn.LayerNorm(80),
        "encoder": torch.nn.LSTM(80, 512, batch_first=True, proj_size=256),
        "ctc_lin": torch.nn.Linear(256, 32),
    }
    asr = ASR(modules=modules, opt_class=lambda p: torch.optim.Adam(p, lr=1e-3), hparams=hparams,
              run_opts={"device": "cuda", "precision": sys.argv[1] if len(sys.argv) > 1 else "fp16"})
    asr.fit(range(hparams["epochs"]), torch.load("train_set.pt"))
