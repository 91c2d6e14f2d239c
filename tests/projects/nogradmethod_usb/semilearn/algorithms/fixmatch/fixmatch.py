import torch
import torch.nn.functional as F

from semilearn.core import AlgorithmBase
from semilearn.core.hooks import PseudoLabelingHook


class FixMatch(AlgorithmBase):
    def __init__(self, model, optimizer, lambda_u=1.0, p_cutoff=0.95):
        super().__init__(model, optimizer, lambda_u)
        self.pl_hook = PseudoLabelingHook(p_cutoff)

    def train_step(self, x_lb, y_lb, x_ulb_w, x_ulb_s):
        with torch.autocast("cuda", dtype=torch.float16):
            pseudo_label, mask = self.pl_hook.gen_ulb_targets(self.model, x_ulb_w)
            num_lb = x_lb.shape[0]
            logits = self.model(torch.cat((x_lb, x_ulb_s)))
            sup_loss = F.cross_entropy(logits[:num_lb], y_lb)
            unsup_loss = (F.cross_entropy(logits[num_lb:], pseudo_label, reduction="none") * mask).mean()
        return sup_loss + self.lambda_u * unsup_loss
