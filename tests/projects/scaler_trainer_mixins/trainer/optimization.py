"""The optimisation mixin of the trainer (huggingface/transformers splits its `Trainer` the
same way into trainer.py and helper modules such as trainer_pt_utils.py; timm/detectron2-style
trainers keep hooks in hooks.py): clipping and the scaler's step + update."""
import torch


class OptimizationMixin:
    def clip_gradients(self, model):
        if self.args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
