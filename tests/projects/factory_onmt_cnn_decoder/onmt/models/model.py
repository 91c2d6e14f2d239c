import torch.nn as nn


class NMTModel(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, tgt):
        enc_out = self.encoder(src)
        return self.decoder(tgt, enc_out)
