import argparse

import torch
from transformers import AutoModelForCausalLM

from openrlhf.trainer.ppo_trainer import PPOTrainer


def train(args, dataloader):
    actor = AutoModelForCausalLM.from_pretrained(args.pretrain).cuda()
    ref_actor = AutoModelForCausalLM.from_pretrained(args.pretrain).cuda().eval()
    optimizer = torch.optim.AdamW(actor.parameters(), lr=args.actor_learning_rate)
    trainer = PPOTrainer(actor, ref_actor, optimizer, args)
    trainer.fit(dataloader)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain", type=str, default="OpenRLHF/Llama-3-8b-sft-mixture")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--max_new_tokens", type=int, default=64)
    parser.add_argument("--kl_coef", type=float, default=0.01)
    parser.add_argument("--actor_learning_rate", type=float, default=1e-6)
    train(parser.parse_args(), [])
