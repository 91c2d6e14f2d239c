import torch
import torch.nn.functional as F
from detectron2.modeling import ROI_HEADS_REGISTRY, StandardROIHeads


def soft_mask_loss(pred_mask_logits, gt_masks):
    probs = pred_mask_logits.sigmoid()
    return F.binary_cross_entropy(probs, gt_masks, reduction="mean")


@ROI_HEADS_REGISTRY.register()
class SoftMaskROIHeads(StandardROIHeads):
    def forward(self, images, features, proposals, targets=None):
        if self.training:
            proposals = self.label_and_sample_proposals(proposals, targets)
            losses = self._forward_box(features, proposals)
            mask_logits = self.mask_head.layers(features, proposals)
            gt = torch.cat([p.gt_masks.tensor for p in proposals]).float()
            losses["loss_mask"] = soft_mask_loss(mask_logits, gt)
            return proposals, losses
        pred_instances = self._forward_box(features, proposals)
        return self.forward_with_given_boxes(features, pred_instances), {}
