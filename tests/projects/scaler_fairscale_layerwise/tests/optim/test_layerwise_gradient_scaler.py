"""Training with per-layer gradient scaling (written for amplint's tests)."""

import torch
from torch.amp import autocast

from fairscale.optim.layerwise_gradient_scaler import LayerwiseGradientScaler


def train_linear_model(model, x_train, y_train, per_layer_scaling=False):
    criterion = torch.nn.BCEWithLogitsLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    layers_to_scale = {"fc1": 1024, "fc2": 512} if per_layer_scaling else {}
    layer_scaler = LayerwiseGradientScaler(model, layers_to_scale)
    for _ in range(2):
        optimizer.zero_grad()
        layer_scaler.scale()
        with autocast("cuda"):
            loss = criterion(model(x_train).squeeze(), y_train)
        loss.backward()
        layer_scaler.unscale()
        layer_scaler.step(optimizer)
    return model
