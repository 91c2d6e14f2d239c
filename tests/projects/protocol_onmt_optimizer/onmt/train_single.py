import torch

from onmt.trainer import Trainer
from onmt.utils.optimizers import Optimizer


def main(opt, model, train_iter):
    optim = Optimizer.from_opt(model, opt)
    train_loss = torch.nn.CrossEntropyLoss()
    trainer = Trainer(model, train_loss, optim, max_grad_norm=opt.max_grad_norm)
    trainer.train(train_iter, opt.train_steps)
