from torch import nn


class Tacotron2Loss(nn.Module):
    def forward(self, mel_out, mel_target):
        return nn.functional.mse_loss(mel_out.float(), mel_target.float())
