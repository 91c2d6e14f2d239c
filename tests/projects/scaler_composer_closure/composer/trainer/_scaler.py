"""A GradScaler whose step takes the optimizer's closure (mosaicml/composer layout)."""

from torch.amp.grad_scaler import GradScaler


class ClosureGradScaler(GradScaler):
    def step(self, optimizer, *args, **kwargs):
        closure = kwargs["closure"]

        def _amp_closure(**kw):
            return closure(**kw)

        return optimizer.step(closure=_amp_closure)
