import torch

from trlx.utils.modeling import amp_context, generate_samples, logprobs_of_labels


class AcceleratePPOTrainer:
    def __init__(self, config, model, optimizer, tokenizer):
        self.config = config
        self.model = model
        self.optimizer = optimizer
        self.tokenizer = tokenizer
        self.autocast = amp_context(config)

    def sequence_logprobs(self, model, tokens, prompt_len):
        logits = model(tokens).logits[:, prompt_len - 1 : -1]
        return logprobs_of_labels(logits, tokens[:, prompt_len:])

    def train_step(self, model, batch):
        prompt = batch["input_ids"]
        with self.autocast:
            samples = generate_samples(model, prompt, self.config.gen_len, self.tokenizer.eos_token_id)
            logprobs = self.sequence_logprobs(model, samples, prompt.shape[1])
        loss = -(logprobs.sum(dim=1) * batch["rewards"]).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()

    def learn(self, dataloader):
        self.model.train()
        for batch in dataloader:
            self.train_step(self.model, batch)
