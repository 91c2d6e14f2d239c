import torch

from model import Transformer


def prefill(model, x, input_pos):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x, input_pos)
    return torch.argmax(logits[:, -1], dim=-1, keepdim=True)


def generate(prompt, max_new_tokens=4):
    model = Transformer()
    input_pos = torch.arange(prompt.size(1))
    next_token = prefill(model, prompt, input_pos)
    tokens = [next_token]
    for i in range(max_new_tokens - 1):
        input_pos = torch.tensor([prompt.size(1) + i])
        next_token = prefill(model, next_token, input_pos)
        tokens.append(next_token)
    return torch.cat(tokens, dim=1)


if __name__ == "__main__":
    print(generate(torch.randint(0, 100, (1, 5))))
