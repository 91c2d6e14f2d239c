import sys

import torch

from speechbrain.core import Brain


class ASR(Brain):
    def compute_forward(self, batch):
        feats = self.modules["encoder"](batch["wav"])
        return self.modules["ctc_lin"](feats).log_softmax(-1)

    def compute_objectives(self, predictions, batch):
        return torch.nn.functional.ctc_loss(predictions.float().transpose(0, 1), batch["tokens"],
                                            batch["wav_lens"], batch["token_lens"])


if __name__ == "__main__":
    modules = {"encoder": torch.nn.Linear(80, 256), "ctc_lin": torch.nn.Linear(256, 32)}
    asr = ASR(modules, torch.optim.Adam, {}, {"precision": sys.argv[1] if len(sys.argv) > 1 else "bf16"})
    asr.fit(range(10), [])
