import torch
import torch.nn as nn

from minigpt4.models.minigpt_base import MiniGPTBase


class MiniGPTv2(MiniGPTBase):
    def __init__(self, vision_width=1408, llama_hidden=4096):
        super().__init__(vision_width=vision_width, llama_hidden=llama_hidden)
        self.vision_to_tokens = nn.Linear(vision_width, vision_width)
        self.llama_proj = nn.Linear(vision_width * 4, llama_hidden)

    def encode_img(self, image):
        device = image.device
        with self.maybe_autocast():
            image_embeds = self.vision_to_tokens(self.visual_encoder(image).transpose(1, 2)).to(device)
            bs, pn, hs = image_embeds.shape
            image_embeds = image_embeds.view(bs, int(pn / 4), int(hs * 4))
        inputs_llama = self.llama_proj(image_embeds)
        atts_llama = torch.ones(inputs_llama.size()[:-1], dtype=torch.long).to(image.device)
        return inputs_llama, atts_llama
