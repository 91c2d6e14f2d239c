import torch

from ..utils.amp import get_amp_context
from .ppo_utils.experience_maker import compute_reward, generate_samples


class PPOTrainer:
    def __init__(self, actor, ref_actor, optimizer, args):
        self.actor = actor
        self.ref_actor = ref_actor
        self.optimizer = optimizer
        self.args = args
        self.amp_ctx = get_amp_context(args)

    def ppo_train_step(self, actor, batch):
        with self.amp_ctx:
            sequences, mask = generate_samples(actor, batch["input_ids"], batch["attention_mask"], self.args.max_new_tokens)
            logits = actor(sequences, attention_mask=mask).logits
            log_probs = torch.log_softmax(logits.float(), dim=-1).mean(-1)
            with torch.no_grad():
                ref_log_probs = torch.log_softmax(self.ref_actor(sequences, attention_mask=mask).logits.float(), dim=-1).mean(-1)
        reward = compute_reward(log_probs.detach(), ref_log_probs, self.args.kl_coef)
        loss = -(reward * log_probs).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()

    def fit(self, dataloader):
        for batch in dataloader:
            self.ppo_train_step(self.actor, batch)
