import torch

from trlx.trainer.accelerate_ppo_trainer import AcceleratePPOTrainer


class Config:
    mixed_precision = True
    gen_len = 24


def main():
    model = torch.load("gpt2-imdb.pt")
    tokenizer = torch.load("gpt2-tokenizer.pt")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.4e-5)
    trainer = AcceleratePPOTrainer(Config(), model, optimizer, tokenizer)
    trainer.learn(torch.load("imdb_prompts.pt"))


if __name__ == "__main__":
    main()
