from onmt.trainer import build_trainer
from onmt.utils.optimizers import Optimizer


def main(opt, model, batches):
    optim = Optimizer.from_opt(model, opt)
    trainer = build_trainer(opt, model, optim)
    trainer.train(batches)
