import torch

from dinov2.eval.linear import run_eval_linear


def main():
    data = [(torch.randn(8, 3, 224, 224), torch.randint(0, 1000, (8,))) for _ in range(4)]
    run_eval_linear(data)


if __name__ == "__main__":
    main()
