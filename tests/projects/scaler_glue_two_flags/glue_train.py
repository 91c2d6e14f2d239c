import logging

import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

logger = logging.getLogger(__name__)


def train(args, dataset, model, device, scaler):
    loader = DataLoader(dataset, sampler=RandomSampler(dataset), batch_size=args.train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    global_step, total = 0, 0.0
    model.zero_grad()
    for _ in range(args.num_train_epochs):
        for step, (input_ids, mask, labels) in enumerate(loader):
            model.train()
            input_ids, mask, labels = input_ids.to(device), mask.to(device), labels.to(device)
            with torch.cuda.amp.autocast(enabled=args.native_amp):
                loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
            loss = loss / args.gradient_accumulation_steps
            if args.fp16:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            total += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
                model.zero_grad()
                global_step += 1
    return global_step, total / max(global_step, 1)


@torch.no_grad()
def evaluate(args, dataset, model, device):
    model.eval()
    correct = 0
    for input_ids, mask, labels in DataLoader(dataset, sampler=SequentialSampler(dataset), batch_size=64):
        logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits
        correct += (logits.argmax(-1).cpu() == labels).sum().item()
    return {"acc": correct / max(len(dataset), 1)}
