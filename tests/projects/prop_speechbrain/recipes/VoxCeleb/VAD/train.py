import sys

import torch

from speechbrain.core import Brain, Stage
from speechbrain.nnet.losses import bce_loss


class VADBrain(Brain):
    def compute_forward(self, batch, stage):
        feats = self.modules.compute_features(batch.wavs.to(self.device))
        outputs, _ = self.modules.rnn(feats)
        return torch.sigmoid(self.modules.output(outputs).squeeze(-1))

    def compute_objectives(self, predictions, batch, stage):
        return bce_loss(predictions, batch.targets.to(self.device), length=batch.lens)

    def fit_batch(self, batch):
        with self.training_ctx:
            predictions = self.compute_forward(batch, Stage.TRAIN)
            loss = bce_loss(predictions, batch.targets.to(self.device), length=batch.lens)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.detach().cpu()


if __name__ == "__main__":
    modules = {
        "compute_features": torch.nn.Conv1d(1, 40, 400, stride=160),
        "rnn": torch.nn.GRU(40, 64, batch_first=True),
        "output": torch.nn.Linear(64, 1),
    }
    brain = VADBrain(modules=modules, opt_class=lambda p: torch.optim.Adam(p, lr=1e-3), hparams={},
                     run_opts={"device": "cuda", "precision": sys.argv[1] if len(sys.argv) > 1 else "fp16"})
    brain.fit(range(10), torch.load("vad_train.pt"))
