from detectron2.config import LazyConfig, instantiate
from detectron2.engine import AMPTrainer, SimpleTrainer


def do_train(cfg):
    model = instantiate(cfg.model)
    model.to(cfg.train.device)
    optim = instantiate(cfg.optimizer)
    train_loader = instantiate(cfg.dataloader.train)
    trainer = (AMPTrainer if cfg.train.amp.enabled else SimpleTrainer)(model, train_loader, optim)
    trainer.train(0, cfg.train.max_iter)


def main(config_file):
    cfg = LazyConfig.load(config_file)
    do_train(cfg)
