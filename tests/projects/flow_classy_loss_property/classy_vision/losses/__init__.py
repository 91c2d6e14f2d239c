from .soft_target_bce import SoftTargetBinaryCrossEntropyLoss


def build_loss(config):
    return SoftTargetBinaryCrossEntropyLoss(reduction=config.get("reduction", "mean"))
