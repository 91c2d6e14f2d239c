import torch
import torch.nn as nn

from drqa.reader import layers


class RnnDocReader(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.embedding = nn.Embedding(args.vocab_size, args.embedding_dim, padding_idx=0)
        self.doc_rnn = nn.LSTM(args.embedding_dim, args.hidden_size, batch_first=True, bidirectional=True)
        self.question_rnn = nn.LSTM(args.embedding_dim, args.hidden_size, batch_first=True, bidirectional=True)
        self.self_attn = layers.LinearSeqAttn(2 * args.hidden_size)
        self.start_attn = nn.Bilinear(2 * args.hidden_size, 2 * args.hidden_size, 1)

    def forward(self, x1, x1_mask, x2, x2_mask):
        doc_hiddens, _ = self.doc_rnn(self.embedding(x1))
        question_hiddens, _ = self.question_rnn(self.embedding(x2))
        q_merge_weights = self.self_attn(question_hiddens, x2_mask)
        question_hidden = layers.weighted_avg(question_hiddens, q_merge_weights)
        return torch.einsum("bld,bd->bl", doc_hiddens, question_hidden)
