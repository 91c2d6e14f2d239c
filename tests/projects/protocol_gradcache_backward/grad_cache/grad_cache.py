import torch
from torch import autograd


class GradCache:
    """Contrastive loss over representations computed in chunks: the loss's gradient with
    respect to each chunk's representations, then each chunk's backward with it."""

    def __init__(self, models, chunk_size, loss_fn):
        self.models = models
        self.chunk_size = chunk_size
        self.loss_fn = loss_fn

    def forward_backward(self, model, model_input):
        with torch.autocast("cuda", dtype=torch.float16):
            hidden = model(model_input)
        reps = hidden.float()
        loss = self.loss_fn(reps)
        grad, = autograd.grad(loss, [reps], retain_graph=True)
        reps.backward(grad)
        return loss.detach()

    def cache_step(self, model_inputs):
        return [self.forward_backward(model, x) for model, x in zip(self.models, model_inputs)]
