import torch

from fair_dev.testing.testing import GPT2
from fairscale.nn.data_parallel.sharded_ddp import ShardedDataParallel


def run_test_gpt2(device, steps=4):
    model = GPT2(embed_dim=32, num_vocab=128).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    ddp_model = ShardedDataParallel(model, optimizer)
    tokens = torch.randint(128, (8, 2), device=device)
    mask = torch.zeros(8, 2, 128, dtype=torch.bool, device=device)
    for _ in range(steps):
        loss = ddp_model(tokens, mask).abs().sum()
        loss.backward()
        optimizer.step()
        # the wrapper can change dtype and back
        ddp_model.to(device=device, dtype=torch.float16)
        ddp_model.to(device=device, dtype=torch.float32)
