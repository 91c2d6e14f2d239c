import torch


class FusedLAMBAMP(torch.optim.Optimizer):
    """LAMB over half parameters with fp32 master copies; reads the GradScaler's scale itself."""

    def __init__(self, params, lr=1e-3, weight_decay=0.01):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))
        self._step_supports_amp_scaling = True
        self.masters = [[p.detach().clone().float() for p in group["params"]]
                        for group in self.param_groups]

    @torch.no_grad()
    def step(self, closure=None):
        # GradScaler.step sets these on an optimizer that takes the scaling over
        scale, found_inf = getattr(self, "grad_scale", None), getattr(self, "found_inf", None)
        if found_inf is not None and found_inf.item():
            return
        for group, masters in zip(self.param_groups, self.masters):
            for p, master in zip(group["params"], masters):
                if p.grad is None:
                    continue
                grad = p.grad.float() if scale is None else p.grad.float() / scale
                master.add_(grad, alpha=-group["lr"])
                p.copy_(master)
