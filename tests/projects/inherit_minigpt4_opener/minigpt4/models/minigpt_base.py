import torch
import torch.nn as nn

from minigpt4.models.base_model import BaseModel


class MiniGPTBase(BaseModel):
    def __init__(self, vision_width=1408, llama_hidden=4096, max_txt_len=32):
        super().__init__()
        self.visual_encoder = nn.Sequential(nn.Conv2d(3, vision_width, 14, 14), nn.Flatten(2))
        self.max_txt_len = max_txt_len

    def concat_emb_input_output(self, input_embs, input_atts, output_embs, output_atts):
        return torch.cat([input_embs, output_embs], dim=1), torch.cat([input_atts, output_atts], dim=1)
