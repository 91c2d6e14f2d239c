import torch


class PseudoLabelingHook:
    """Hard pseudo-labels of the weakly augmented unlabeled batch, from the model itself."""

    def __init__(self, p_cutoff=0.95):
        self.p_cutoff = p_cutoff

    @torch.no_grad()
    def gen_ulb_targets(self, model, x_ulb_w, T=1.0):
        logits = model(x_ulb_w)
        probs = torch.softmax(logits / T, dim=-1)
        max_probs, targets = probs.max(dim=-1)
        return targets, max_probs.ge(self.p_cutoff).float()
