from mmcv.runner import EpochBasedRunner, Fp16OptimizerHook, OptimizerHook, build_optimizer


def train_detector(model, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    runner = EpochBasedRunner(model, optimizer=optimizer, max_epochs=12)
    fp16_cfg = cfg.get("fp16", None)
    if fp16_cfg is not None:
        optimizer_config = Fp16OptimizerHook(**fp16_cfg, distributed=False)
    else:
        optimizer_config = OptimizerHook()
    runner.register_training_hooks(cfg.lr_config, optimizer_config)
    runner.run([], [("train", 1)])
