import torch
from torch import nn

from fairseq.models.text_to_speech.hifigan import Generator as HiFiGANModel


class HiFiGANVocoder(nn.Module):
    def __init__(self, checkpoint_path, model_cfg, fp16=False):
        super().__init__()
        self.model = HiFiGANModel(model_cfg)
        state_dict = torch.load(checkpoint_path)
        self.model.load_state_dict(state_dict["generator"])
        if fp16:
            self.model.half()

    def forward(self, x):
        model = self.model.eval().to(x.device)
        # (1, T, D) -> (1, D, T)
        return model(x.transpose(1, 2)).detach().squeeze(0)
