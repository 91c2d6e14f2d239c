import torch
import torch.nn as nn


class Embedding(nn.Module):
    def __init__(self, n_freqs=6):
        super().__init__()
        self.freq_bands = 2.0 ** torch.linspace(0, n_freqs - 1, n_freqs)

    def forward(self, x):
        out = [x]
        for freq in self.freq_bands:
            out += [torch.sin(freq * x), torch.cos(freq * x)]
        return torch.cat(out, -1)
