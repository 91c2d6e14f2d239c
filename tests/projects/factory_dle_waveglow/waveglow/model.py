import torch
import torch.nn as nn


class WN(nn.Module):
    def __init__(self, n_channels):
        super().__init__()
        self.start = nn.Conv1d(n_channels, n_channels, 1)
        self.end = nn.Conv1d(n_channels, 2 * n_channels, 1)

    def forward(self, audio, spect):
        return self.end(torch.tanh(self.start(audio) + spect))


class WaveGlow(nn.Module):
    def __init__(self, n_mel_channels, n_flows, n_group, layerdrop=0.1):
        super().__init__()
        self.upsample = nn.ConvTranspose1d(n_mel_channels, n_mel_channels, 1024, stride=256)
        self.n_flows = n_flows
        self.n_group = n_group
        self.layerdrop = layerdrop
        self.WN = nn.ModuleList([WN(n_group // 2) for _ in range(n_flows)])

    def infer(self, spect, sigma=1.0):
        spect = self.upsample(spect)
        spect = spect.unfold(2, self.n_group, self.n_group).permute(0, 2, 1, 3)
        audio = torch.randn(spect.size(0), self.n_group, spect.size(2),
                            device=spect.device).to(spect.dtype)
        audio = sigma * audio
        for k in reversed(range(self.n_flows)):
            if not self.training or (torch.rand(1) > self.layerdrop):
                n_half = audio.size(1) // 2
                output = self.WN[k](audio[:, :n_half], spect)
                audio = torch.cat([audio[:, :n_half], audio[:, n_half:] - output[:, n_half:]], 1)
        return audio.permute(0, 2, 1).contiguous().view(audio.size(0), -1)
