import torch
import torch.nn as nn


def scatter_scores(values, keep):
    out = torch.zeros(*keep.shape, values.shape[-1], device=values.device)
    out[keep] = values
    return out


class EncoderQuerySelector(nn.Module):
    def __init__(self, hidden_dim=256, num_classes=91):
        super().__init__()
        self.enc_out_class_embed = nn.Linear(hidden_dim, num_classes)

    def forward(self, memory, keep):
        proposals = torch.rand(1, memory.shape[1], 4, device=memory.device)
        valid = ((proposals > 0.01) & (proposals < 0.99)).all(-1, keepdim=True)
        scores = self.enc_out_class_embed(memory)
        scores = scores.masked_fill(~valid, torch.finfo(proposals.dtype).min)
        return scatter_scores(scores[keep], keep)


def train_one_epoch(backbone, data_loader, optimizer):
    selector = EncoderQuerySelector()
    for samples, keep in data_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            scores = selector(backbone(samples), keep)
            loss = scores.sigmoid().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
