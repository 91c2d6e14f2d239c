import torch.nn as nn
import torch.nn.functional as F


class MPTForCausalLM(nn.Module):
    def __init__(self, vocab_size=512, d_model=64):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d_model)
        self.block = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, input_ids):
        return self.lm_head(self.block(self.wte(input_ids)))

    def loss(self, logits, batch):
        return F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["input_ids"][:, 1:].flatten())
