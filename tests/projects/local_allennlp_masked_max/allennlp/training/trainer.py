import torch

from allennlp.modules.seq2vec_encoders.max_pool_encoder import MaxPoolEncoder


class GradientDescentTrainer:
    def __init__(self, embedding_dim, optimizer, use_amp=True):
        self.encoder = MaxPoolEncoder(embedding_dim)
        self.optimizer = optimizer
        self._scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def batch_outputs(self, tokens, mask):
        with torch.autocast("cuda", enabled=True):
            return self.encoder(tokens, mask).sum()

    def train_step(self, tokens, mask):
        loss = self.batch_outputs(tokens, mask)
        self._scaler.scale(loss).backward()
        self._scaler.step(self.optimizer)
        self._scaler.update()
