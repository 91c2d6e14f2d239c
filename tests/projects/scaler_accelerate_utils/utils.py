"""Helpers of the accelerate-style example, in their own module as in many scripts built on
huggingface/accelerate's examples/ (complete_nlp_example.py and friends). `log_grad_norm`
unscales the gradients to log their true norm (accelerate/accelerator.py:2955)."""
import torch


def log_grad_norm(accelerator, model, optimizer, step):
    accelerator.unscale_gradients(optimizer=optimizer)
    grads = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    norm = torch.norm(torch.stack(grads))
    accelerator.print(f"step {step}: grad norm {norm.item():.3f}")


def get_model():
    return torch.nn.Linear(16, 2)


def get_dataloader(batch_size):
    data = torch.utils.data.TensorDataset(torch.randn(64, 16), torch.randint(0, 2, (64,)))
    return torch.utils.data.DataLoader(data, batch_size=batch_size)
