import contextlib

import torch


def seed_all(seed: int) -> None:
    torch.manual_seed(seed)


@contextlib.contextmanager
def autocast_context(cfg):
    if cfg.precision == "fp32":
        yield
    else:
        with torch.autocast("cuda", dtype=cfg.autocast_precision):
            yield


def barrier() -> None:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
