from torch import nn


class DeepSupervisionWrapper(nn.Module):
    def __init__(self, loss, weight_factors):
        super().__init__()
        self.loss = loss
        self.weight_factors = tuple(weight_factors)

    def forward(self, outputs, targets):
        total = 0.0
        for output, target, weight in zip(outputs, targets, self.weight_factors):
            if weight != 0.0:
                total = total + weight * self.loss(output, target)
        return total
