import torch
from torch.nn.functional import linear, normalize


class PartialFC_V2(torch.nn.Module):
    """The class centres of the classifier, with a margin-based softmax over their cosines."""

    def __init__(self, margin_loss, embedding_size, num_classes):
        super().__init__()
        self.margin_softmax = margin_loss
        self.weight = torch.nn.Parameter(torch.normal(0, 0.01, (num_classes, embedding_size)))
        self.dist_cross_entropy = torch.nn.CrossEntropyLoss()

    def forward(self, local_embeddings, local_labels):
        norm_embeddings = normalize(local_embeddings)
        norm_weight_activated = normalize(self.weight)
        logits = linear(norm_embeddings, norm_weight_activated)
        logits = self.margin_softmax(logits.clamp(-1, 1), local_labels)
        return self.dist_cross_entropy(logits, local_labels)

    @torch.no_grad()
    def update_centers(self, embeddings, labels):
        """Reset the centres of the classes seen in the batch to their latest embeddings."""
        self.weight.data.index_copy_(0, labels, normalize(embeddings))
