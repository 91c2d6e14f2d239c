import torch

from grad_cache.grad_cache import GradCache


def contrastive_loss(reps):
    scores = reps @ reps.t()
    return torch.nn.functional.cross_entropy(scores, torch.arange(scores.size(0), device=scores.device))


def train(encoder, loader, steps):
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda")
    cache = GradCache([encoder], chunk_size=8, loss_fn=contrastive_loss)
    for step, batch in enumerate(loader):
        optimizer.zero_grad()
        loss = cache.forward_backward(encoder, batch)
        scaler.step(optimizer)
        scaler.update()
        if step >= steps:
            break
