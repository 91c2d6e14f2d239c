import numpy as np
import torch

from model import GPT, GPTConfig

batch_size = 12
block_size = 1024
max_iters = 600000
compile = True


def get_batch(data):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.pin_memory().to("cuda", non_blocking=True), y.pin_memory().to("cuda", non_blocking=True)


train_data = np.memmap("data/openwebtext/train.bin", dtype=np.uint16, mode="r")
model = GPT(GPTConfig(block_size=block_size))
model.to("cuda")
scaler = torch.amp.GradScaler("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
if compile:
    model = torch.compile(model)

X, Y = get_batch(train_data)
for iter_num in range(max_iters):
    with torch.autocast("cuda", dtype=torch.float16):
        logits, loss = model(X, Y)
    X, Y = get_batch(train_data)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
