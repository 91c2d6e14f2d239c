import torch
from torch import nn

from taming.modules.amp import step_optimizer


class Net2NetTransformer(nn.Module):
    def __init__(self, vocab_size=1024, n_embd=512):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.head = nn.Linear(n_embd, vocab_size)
        self.opt_emb = torch.optim.AdamW(self.tok_emb.parameters(), lr=4.5e-6)
        self.opt_head = torch.optim.AdamW(self.head.parameters(), lr=4.5e-6)
        self.scaler = torch.amp.GradScaler("cuda")

    def training_step(self, idx, target):
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.head(self.tok_emb(idx))
            loss = nn.functional.cross_entropy(logits.float().flatten(0, 1), target.flatten())
        self.scaler.scale(loss).backward()
        step_optimizer(self.scaler, self.opt_emb)
        step_optimizer(self.scaler, self.opt_head, last=True)
        return loss.detach()
