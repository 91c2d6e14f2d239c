import torch.nn as nn


class Transformer(nn.Module):
    def __init__(self, n_src_vocab, n_trg_vocab, d_model=512):
        super().__init__()
        self.src_emb = nn.Embedding(n_src_vocab, d_model)
        self.trg_emb = nn.Embedding(n_trg_vocab, d_model)
        self.core = nn.Transformer(d_model=d_model, batch_first=True)
        self.trg_word_prj = nn.Linear(d_model, n_trg_vocab, bias=False)

    def forward(self, src_seq, trg_seq):
        out = self.core(self.src_emb(src_seq), self.trg_emb(trg_seq))
        return self.trg_word_prj(out).view(-1, self.trg_word_prj.out_features)
