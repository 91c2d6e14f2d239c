import torch
import torch.nn as nn


class SpectrogramFeatures(nn.Module):
    def __init__(self, n_fft=512, hop=160, win=400, n_mels=80):
        super().__init__()
        self.n_fft, self.hop, self.win = n_fft, hop, win
        self.register_buffer("window", torch.hann_window(win))
        self.register_buffer("filters", torch.rand(1, n_mels, n_fft // 2 + 1))

    def spectrum(self, audio):
        spec = torch.stft(audio, n_fft=self.n_fft, hop_length=self.hop, win_length=self.win,
                          window=self.window.to(dtype=torch.float), return_complex=True)
        return torch.view_as_real(spec)

    def forward(self, audio):
        dtype = audio.dtype
        power = self.spectrum(audio)
        power = power.pow(2).sum(-1)
        mel = torch.matmul(self.filters.to(power.dtype), power)
        mel = torch.log(mel + 1e-20)
        return mel.to(dtype)
