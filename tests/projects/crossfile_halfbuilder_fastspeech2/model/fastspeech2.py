import torch
from torch import nn


class FastSpeech2(nn.Module):
    def __init__(self, preprocess_config, model_config):
        super().__init__()
        n_mel = preprocess_config["preprocessing"]["mel"]["n_mel_channels"]
        hidden = model_config["transformer"]["encoder_hidden"]
        self.src_emb = nn.Embedding(model_config["n_symbols"], hidden, padding_idx=0)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(hidden, 2, batch_first=True), 4)
        self.mel_linear = nn.Linear(hidden, n_mel)

    def forward(self, texts):
        return self.mel_linear(self.encoder(self.src_emb(texts)))
