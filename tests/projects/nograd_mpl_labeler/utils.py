import torch


class PseudoLabeler:
    """Hard pseudo labels and their confidence mask from the model it is built with."""

    def __init__(self, model, threshold=0.95):
        self.model = model
        self.threshold = threshold

    def __call__(self, images):
        with torch.no_grad():
            probs = torch.softmax(self.model(images).float(), dim=-1)
            confidence, labels = probs.max(dim=-1)
        return labels, confidence.ge(self.threshold).float()


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n
