from yacs.config import CfgNode as CN

_C = CN()
_C.MODEL = CN()
_C.MODEL.NUM_CLASSES = 1000
_C.TRAIN = CN()
_C.TRAIN.EPOCHS = 300
_C.TRAIN.BASE_LR = 5e-4
_C.TRAIN.CLIP_GRAD = 5.0
_C.AMP_ENABLE = True
_C.PRINT_FREQ = 10


def get_config(args):
    config = _C.clone()
    config.defrost()
    if args.cfg:
        config.merge_from_file(args.cfg)
    if args.disable_amp:
        config.AMP_ENABLE = False
    config.freeze()
    return config
