import torch

from llama_recipes.utils.config_utils import inference_dtype


class Generator:
    def __init__(self, model, inference_config):
        self.model = model
        self.amp_dtype = inference_dtype(inference_config)

    @torch.no_grad()
    def generate(self, input_ids):
        with torch.autocast("cpu", dtype=self.amp_dtype):
            return self.model.generate(input_ids=input_ids, max_new_tokens=32)
