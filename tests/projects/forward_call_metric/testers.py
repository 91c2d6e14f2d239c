import torch


def compute_all_embeddings(trunk, embedder, dataloader, num_samples, dim):
    with torch.autocast("cuda", dtype=torch.float16):
        all_q = torch.zeros(num_samples, dim, device="cuda")
        for data, labels, indices in dataloader:
            q = embedder(trunk(data.cuda()))
            all_q.index_copy_(0, indices.cuda(), q)
    return all_q


def embedding_norms(trunk, embedder, dataloader):
    with torch.autocast("cuda", dtype=torch.float16):
        return [embedder(trunk(data.cuda())).norm(dim=1) for data, _, _ in dataloader]
