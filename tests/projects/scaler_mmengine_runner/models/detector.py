"""A custom mmengine model, shaped like open-mmlab/mmengine's BaseModel subclasses that override
`train_step` (mmengine/model/base_model/base_model.py: `train_step` runs the forward under
`optim_wrapper.optim_context(self)` and `update_params` after it); here the whole step sits in
the context, so `update_params` (backward + step + zero_grad,
mmengine/optim/optimizer/optimizer_wrapper.py:196-202) runs under AmpOptimWrapper's autocast."""
import torch
from mmengine.model import BaseModel


class ToyDetector(BaseModel):
    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor)
        self.backbone = torch.nn.Conv2d(3, 8, 3)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        feats = self.backbone(inputs).mean(dim=(2, 3))
        logits = self.head(feats)
        if mode == "loss":
            return {"loss_cls": torch.nn.functional.cross_entropy(logits, data_samples)}
        return logits

    def train_step(self, data, optim_wrapper):
        with optim_wrapper.optim_context(self):
            data = self.data_preprocessor(data, True)
            losses = self._run_forward(data, mode="loss")
            parsed_losses, log_vars = self.parse_losses(losses)
            optim_wrapper.update_params(parsed_losses)
        return log_vars
