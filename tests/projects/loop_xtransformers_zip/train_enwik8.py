import torch
import torch.nn.functional as F

from x_transformers import Decoder, TransformerWrapper

NUM_BATCHES = 100000
SEQ_LEN = 1024


def train(loader):
    model = TransformerWrapper(num_tokens=256, max_seq_len=SEQ_LEN, attn_layers=Decoder(dim=512, depth=6, heads=8))
    model.cuda()
    optim = torch.optim.Adam(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for i, (seq, mask) in zip(range(NUM_BATCHES), loader):
        seq, mask = seq.cuda(), mask.cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(seq[:, :-1], mask=mask[:, :-1])
            loss = F.cross_entropy(logits.transpose(1, 2), seq[:, 1:])
        scaler.scale(loss).backward()
        scaler.unscale_(optim)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(optim)
        scaler.update()
        optim.zero_grad()
