from megatron.model.gpt_model import GPTModel
