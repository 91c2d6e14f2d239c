import torch


class Trainer:
    def __init__(self, model, train_loss, optim, max_grad_norm=5.0, accum_count=2):
        self.model = model
        self.train_loss = train_loss
        self.optim = optim
        self.max_grad_norm = max_grad_norm
        self.accum_count = accum_count

    def train(self, train_iter, train_steps):
        step = 0
        batches = []
        for batch in train_iter:
            batches.append(batch)
            if len(batches) == self.accum_count:
                self._gradient_accumulation(batches)
                batches = []
                step += 1
                if step >= train_steps:
                    break

    def _gradient_accumulation(self, batches):
        self.optim.zero_grad()
        for batch in batches:
            with torch.autocast("cuda", dtype=torch.float16):
                output = self.model(batch["src"], batch["tgt"])
                loss = self.train_loss(output, batch["tgt"]) / len(batches)
            self.optim.backward(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optim.step()
