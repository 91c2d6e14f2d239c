import torch
import torch.nn.functional as F

from megatron.model import GPTModel


def causal_mask(tokens):
    s = tokens.shape[1]
    return torch.ones(s, s, dtype=torch.bool, device=tokens.device).triu(1)


def forward_step(model, batch):
    tokens, labels = batch
    logits = model(tokens, causal_mask(tokens))
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())


def train_step(model, batch, optimizer, scaler):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = forward_step(model, batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()


def pretrain(args, batches):
    model = GPTModel(args.vocab, args.hidden, args.heads, args.layers).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    for step, batch in enumerate(batches):
        loss = train_step(model, batch, optimizer, scaler)
        if step % 10 == 0:
            print(step, loss)
