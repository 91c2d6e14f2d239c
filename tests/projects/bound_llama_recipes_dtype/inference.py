from llama_recipes.inference.model_utils import Generator


def main(model, tokenizer, prompt, inference_config):
    generator = Generator(model, inference_config)
    ids = tokenizer(prompt, return_tensors="pt").input_ids
    return tokenizer.decode(generator.generate(ids)[0])
