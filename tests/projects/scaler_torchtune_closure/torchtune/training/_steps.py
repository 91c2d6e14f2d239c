import torch


def grad_norm(params):
    norms = [p.grad.detach().norm(2) for p in params if p.grad is not None]
    return torch.stack(norms).norm(2)


def make_step_fn(optimizer, grad_scaler, model, clip_norm=None):
    params = [p for p in model.parameters() if p.requires_grad]

    def step_fn():
        grad_scaler.unscale_(optimizer)
        if clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, clip_norm)
        grad_scaler.step(optimizer)
        grad_scaler.update()
        optimizer.zero_grad(set_to_none=True)

    return step_fn
