"""Overhead of amplint.runtime.monitor on a small MLP training step (a benchmark, not a test).

    python benchmarks/runtime_overhead.py [--steps 100] [--repeats 7] [--dtype bfloat16|float16]
                                          [--threads 1] [--device cpu|cuda]

Prints the median step time without a monitor and the ratio (with / without) for: the monitor with
no checks (the interposition alone), the default checks (overflow locator off), and all checks
with the overflow locator on (which checks every half op's output), once with one monitor around
all steps and once with a monitor per step (one batched read-back per step).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

import amplint.runtime as ar


def make_step(dtype, device="cpu"):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.LayerNorm(256), nn.Linear(256, 256),
                          nn.GELU(), nn.Linear(256, 10)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(device, enabled=dtype == torch.float16)
    x, y = torch.randn(64, 64, device=device), torch.randint(0, 10, (64,), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=dtype):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()

    return step


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def run_steps(step, steps, make_monitor=None, per_step=False):
    _sync()
    if per_step:  # a monitor around each step: the overflow locator reads back once per step
        start = time.perf_counter()
        for _ in range(steps):
            with make_monitor() as mon:
                step()
            assert not mon.findings, mon.findings
        _sync()
        return (time.perf_counter() - start) / steps
    mon = make_monitor() if make_monitor else None
    if mon is not None:
        mon.__enter__()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync()
    elapsed = (time.perf_counter() - start) / steps
    if mon is not None:
        mon.__exit__(None, None, None)
        assert not mon.findings, mon.findings
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dtype", choices=["bfloat16", "float16"], default="bfloat16")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: "
                        "steadier timings on a shared machine)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    step = make_step(dtype, args.device)
    configs = [
        ("without monitor", None),
        ("monitor, no checks", lambda: ar.monitor(checks=[])),
        ("monitor, default checks (overflow off)", lambda: ar.monitor()),
        ("monitor, all checks + overflow locator", lambda: ar.monitor(overflow=True)),
        ("  same, one monitor per step", lambda: ar.monitor(overflow=True)),
    ]
    for _ in range(10):
        step()
    # Rounds interleave the configurations, so drift in machine load hits them alike; the ratio
    # reported is the median over rounds of (config time / baseline time in the same round).
    times = {name: [] for name, _ in configs}
    for _ in range(args.repeats):
        for name, make in configs:
            times[name].append(run_steps(step, args.steps, make, per_step="per step" in name))
    base = times["without monitor"]
    print(f"torch {torch.__version__}, {args.device} autocast {args.dtype}, MLP 64-256-256-10 (+LayerNorm, "
          f"AdamW, clip), batch 64, {args.steps} steps x {args.repeats} interleaved rounds")
    for name, _ in configs:
        ratio = statistics.median(t / b for t, b in zip(times[name], base))
        print(f"{name:42s} {statistics.median(times[name]) * 1e3:8.3f} ms/step   {ratio:.2f}x")


if __name__ == "__main__":
    main()
