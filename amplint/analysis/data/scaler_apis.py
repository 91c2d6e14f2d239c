"""The GradScaler APIs torch ships (each class with its constructor's parameters in order) and the
clipping calls the scaler protocol knows (facts/scalers.py reads them)."""

from __future__ import annotations

SCALER_APIS = {
    "torch.amp.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                             "growth_interval", "enabled"),
    "torch.cuda.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                  "growth_interval", "enabled"),
    "torch.cpu.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                 "growth_interval", "enabled"),
    "torch.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                         "growth_interval", "enabled"),
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": (
        "device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled",
        "process_group"),
    "torch.distributed.fsdp.ShardedGradScaler": (
        "device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled",
        "process_group"),
}

CLIP_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad_value",
}
# Last names of clipping calls whatever their receiver: `model.clip_grad_norm_` (FSDP),
# timm's `dispatch_clip_grad`, `utils.clip_gradients(model, c)` (DINO and friends).
CLIP_NAMES = {
    "clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grad_value",
    "dispatch_clip_grad", "clip_gradients", "clip_grads",
}
# Receivers whose clipping unscales by itself (accelerate, Lightning, Fabric, DeepSpeed).
SELF_UNSCALING = ("accelerator", "fabric", "trainer", "strategy", "precision", "engine")
# Methods that make a `*scaler` name another kind of object (scikit-learn's StandardScaler).
NOT_SCALER_METHODS = {"fit", "transform", "fit_transform", "inverse_transform", "partial_fit"}
