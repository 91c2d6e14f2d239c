import torch

from mingpt.model import GPT
from mingpt.trainer import build_trainer


def batch_end_callback(trainer):
    if trainer.iter_num % 10 == 0:
        print(f"iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")


if __name__ == "__main__":
    model = GPT(vocab_size=65)
    loader = [(torch.randint(0, 65, (4, 16)), torch.randint(0, 65, (4, 16))) for _ in range(5)]
    trainer = build_trainer(model, loader, amp=torch.cuda.is_available())
    trainer.add_callback("on_batch_end", batch_end_callback)
    trainer.run()
