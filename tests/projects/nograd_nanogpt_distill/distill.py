"""Self-distillation on nanoGPT: sample continuations from the current model, then train on
them with the usual loss (a nanoGPT fork's recipe).

$ python distill.py --device=cuda --dtype=bfloat16
"""
import os
import time
from contextlib import nullcontext

import numpy as np
import torch

from model import GPT, GPTConfig

out_dir = "out-distill"
batch_size = 12
prompt_len = 16
new_tokens = 48
max_iters = 500
learning_rate = 3e-5
device = "cuda"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"

device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

data = np.memmap(os.path.join("data", "shakespeare_char", "train.bin"), dtype=np.uint16, mode="r")


def get_prompts():
    ix = torch.randint(len(data) - prompt_len, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + prompt_len].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True)


def distill_step(net, prompts, optimizer, scaler):
    with ctx:
        samples = net.generate(prompts, new_tokens, top_k=200)
        _, loss = net(samples[:, :-1], samples[:, 1:])
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


if __name__ == "__main__":
    checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
    model = GPT(GPTConfig(**checkpoint["model_args"]))
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    scaler = torch.amp.GradScaler("cuda", enabled=(dtype == "float16"))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    t0 = time.time()
    for it in range(max_iters):
        loss = distill_step(model, get_prompts(), optimizer, scaler)
        if it % 50 == 0:
            print(f"iter {it}: loss {loss:.4f}, {time.time() - t0:.1f}s")
