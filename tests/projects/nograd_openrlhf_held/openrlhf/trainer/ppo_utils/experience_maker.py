import torch


@torch.no_grad()
def generate_samples(actor, input_ids, attention_mask, max_new_tokens):
    sequences = input_ids
    for _ in range(max_new_tokens):
        logits = actor(sequences, attention_mask=attention_mask).logits[:, -1, :]
        next_token = torch.multinomial(torch.softmax(logits.float(), dim=-1), num_samples=1)
        sequences = torch.cat([sequences, next_token], dim=1)
        attention_mask = torch.cat([attention_mask, torch.ones_like(next_token)], dim=1)
    return sequences, attention_mask


def compute_reward(log_probs, ref_log_probs, kl_coef):
    return -kl_coef * (log_probs - ref_log_probs)
