import torch
import torch.nn.functional as F

from mingpt.model import GPT
from mingpt.trainer import Trainer


def carry_loss_callback(trainer):
    # an auxiliary loss on the carry bit, added to the trainer's loss under its autocast
    carry = torch.sigmoid(trainer.logits[:, -1, 0])
    trainer.loss = trainer.loss + F.binary_cross_entropy(carry, trainer.targets[:, -1].float())


def eval_callback(trainer):
    # registered for an event the trainer never triggers inside its region
    probs = torch.sigmoid(trainer.logits[:, -1, 0])
    trainer.eval_bce = F.binary_cross_entropy(probs, trainer.targets[:, -1].float())


def run(config, loader):
    model = GPT(config.model)
    trainer = Trainer(config.trainer, model, loader)
    trainer.add_callback("on_batch_loss", carry_loss_callback)
    trainer.add_callback("on_epoch_end", eval_callback)
    trainer.run()
