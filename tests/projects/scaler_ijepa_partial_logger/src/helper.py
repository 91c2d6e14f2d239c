import torch


def init_opt(encoder, predictor, wd=1e-6, lr=1e-3, use_fp16=False):
    param_groups = [
        {"params": [p for n, p in encoder.named_parameters() if "bias" not in n and len(p.shape) != 1]},
        {"params": [p for n, p in predictor.named_parameters() if "bias" not in n and len(p.shape) != 1]},
    ]
    optimizer = torch.optim.AdamW(param_groups, lr=lr, weight_decay=wd)
    scaler = torch.amp.GradScaler("cuda") if use_fp16 else None
    return optimizer, scaler
