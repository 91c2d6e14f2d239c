from types import SimpleNamespace

import torch

from audiocraft.solvers.compression import CompressionSolver


def main():
    cfg = SimpleNamespace(device="cuda", autocast=True, epochs=200)
    solver = CompressionSolver(cfg)
    solver.run(torch.load("segments.pt"))


if __name__ == "__main__":
    main()
