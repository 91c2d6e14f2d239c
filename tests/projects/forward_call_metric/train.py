from models import MLPEmbedder, Trunk
from testers import compute_all_embeddings, embedding_norms


def run(dataloader, num_samples):
    trunk = Trunk().cuda()
    embedder = MLPEmbedder().cuda()
    norms = embedding_norms(trunk, embedder, dataloader)
    return compute_all_embeddings(trunk, embedder, dataloader, num_samples, 16), norms
