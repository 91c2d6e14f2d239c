import torch


class Tacotron2(torch.nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.embedding = torch.nn.Embedding(hparams.n_symbols, hparams.symbols_embedding_dim)
        self.decoder = torch.nn.Linear(hparams.symbols_embedding_dim, hparams.n_mel_channels)

    def forward(self, inputs):
        return self.decoder(self.embedding(inputs))


class Tacotron2Loss(torch.nn.Module):
    def forward(self, model_output, targets):
        return torch.nn.functional.mse_loss(model_output, targets)
