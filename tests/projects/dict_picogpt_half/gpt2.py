import torch

from utils import load_encoder_hparams_and_params


def gelu(x):
    return 0.5 * x * (1 + torch.tanh((2 / torch.pi) ** 0.5 * (x + 0.044715 * x ** 3)))


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    variance = x.var(dim=-1, keepdim=True, unbiased=False)
    return g * (x - mean) / torch.sqrt(variance + eps) + b


def generate(inputs, state, n_layer, n_tokens_to_generate, temperature=1.0):
    params = {name: tensor.half() for name, tensor in state.items()}
    for _ in range(n_tokens_to_generate):
        ids = torch.tensor(inputs)
        x = params["wte"][ids] + params["wpe"][torch.arange(len(inputs))]
        for i in range(n_layer):
            h = layer_norm(x, params[f"h.{i}.ln_1.g"], params[f"h.{i}.ln_1.b"])
            x = x + gelu(h @ params[f"h.{i}.mlp.c_fc.w"]) @ params[f"h.{i}.mlp.c_proj.w"]
        x = layer_norm(x, params["ln_f.g"], params["ln_f.b"])
        logits = x[-1] @ params["wte"].T / temperature
        probs = logits.exp() / logits.exp().sum()
        inputs.append(int(torch.multinomial(probs.float(), 1)))
    return inputs[len(inputs) - n_tokens_to_generate:]


def main(prompt, n_tokens_to_generate=40, model_size="124M", models_dir="models"):
    encoder, hparams, state = load_encoder_hparams_and_params(model_size, models_dir)
    input_ids = [encoder[token] for token in prompt.split()]
    output_ids = generate(input_ids, state, hparams["n_layer"], n_tokens_to_generate)
    inverse = {v: k for k, v in encoder.items()}
    return " ".join(inverse[i] for i in output_ids)


if __name__ == "__main__":
    import sys

    print(main(" ".join(sys.argv[1:])))
