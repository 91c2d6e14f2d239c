from contextlib import nullcontext

import torch


def amp_context(config):
    """The mixed-precision context of a run: autocast when the config asks for it."""
    if not config.mixed_precision:
        return nullcontext()
    return torch.autocast("cuda", dtype=torch.float16)


def logprobs_of_labels(logits, labels):
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return torch.gather(logprobs, dim=-1, index=labels.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def generate_samples(model, input_ids, max_new_tokens, eos_token_id):
    tokens = input_ids
    for _ in range(max_new_tokens):
        logits = model(tokens).logits[:, -1, :]
        next_token = torch.argmax(logits.float(), dim=-1, keepdim=True)
        tokens = torch.cat([tokens, next_token], dim=1)
        if (next_token == eos_token_id).all():
            break
    return tokens
