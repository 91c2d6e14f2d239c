from torch import nn


class Tacotron2(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.n_mel_channels = hparams.n_mel_channels
        self.embedding = nn.Embedding(148, 512)
        self.decoder = nn.LSTM(512, 1024, batch_first=True)
        self.mel_proj = nn.Linear(1024, hparams.n_mel_channels)

    def parse_batch(self, batch):
        text, mel = batch
        return text.cuda(), mel.cuda()

    def forward(self, text):
        out, _ = self.decoder(self.embedding(text))
        return self.mel_proj(out)
