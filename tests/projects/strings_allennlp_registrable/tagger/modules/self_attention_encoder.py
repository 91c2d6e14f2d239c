import math

import torch

from tagger.modules.seq2seq_encoder import Seq2SeqEncoder


@Seq2SeqEncoder.register("self_attention")
class SelfAttentionEncoder(Seq2SeqEncoder):
    def __init__(self, input_dim, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = torch.nn.Linear(input_dim, 3 * input_dim)
        self.out = torch.nn.Linear(input_dim, input_dim)
        self.input_dim = input_dim

    def get_output_dim(self):
        return self.input_dim

    def forward(self, inputs, mask):
        q, k, v = self.qkv(inputs).chunk(3, dim=-1)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.input_dim)
        scores = scores.masked_fill(~mask.unsqueeze(1), -1e9)
        return self.out(torch.bmm(scores.softmax(-1), v))
