from torch import nn


class FastSpeech2Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.mae = nn.L1Loss()

    def forward(self, mel_targets, mel_predictions):
        return self.mae(mel_predictions.float(), mel_targets.float())
