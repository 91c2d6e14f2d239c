import torch

from lit_gpt.model import GPT
from lit_gpt.utils import GradientAccumulator, chunked_cross_entropy

micro_batch_size = 4
gradient_accumulation_steps = 8
grad_clip = 1.0


def train(model, optimizer, batches, device):
    accumulator = GradientAccumulator(gradient_accumulation_steps)
    for batch in batches:
        input_ids = batch[:, :-1].to(device)
        targets = batch[:, 1:].to(device)
        is_accumulating = accumulator.is_accumulating
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids)
            loss = chunked_cross_entropy(logits, targets)
            accumulator.backward(loss)
        if not is_accumulating:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            optimizer.zero_grad()


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.accumulator = GradientAccumulator(gradient_accumulation_steps)

    def micro_step(self, input_ids, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = chunked_cross_entropy(self.model(input_ids), targets)
            self.accumulator.backward(loss)


def main():
    model = GPT().to("cuda")
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
    batches = [torch.randint(0, 256, (micro_batch_size, 33)) for _ in range(16)]
    train(model, optimizer, batches, torch.device("cuda"))
    Trainer(model, optimizer).micro_step(batches[0][:, :-1], batches[0][:, 1:])


if __name__ == "__main__":
    main()
