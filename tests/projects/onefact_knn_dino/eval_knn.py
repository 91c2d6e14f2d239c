import torch

from dino_knn.retrieval import KNNVoter


def main():
    bank = torch.randn(16, 8)
    voter = KNNVoter(8, bank)
    keep = torch.arange(16) % 2 == 0
    votes = voter.scores(torch.randn(8), keep)
    emb = voter.embed(torch.randn(16, 8), keep)
    return votes, emb


if __name__ == "__main__":
    main()
