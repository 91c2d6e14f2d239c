import torch


class SimpleTagger(torch.nn.Module):
    def __init__(self, vocab_size, num_tags, embedding_dim, encoder):
        super().__init__()
        self.embedder = torch.nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.encoder = encoder
        self.tag_projection = torch.nn.Linear(encoder.get_output_dim(), num_tags)

    def forward(self, tokens, tags):
        mask = tokens != 0
        encoded = self.encoder(self.embedder(tokens), mask)
        logits = self.tag_projection(encoded)
        return torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tags.flatten(), ignore_index=-1)
