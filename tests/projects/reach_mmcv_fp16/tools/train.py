from mmcv import Config

from detlite.apis import train_detector
from detlite.models import build_detector


def main(config_path):
    cfg = Config.fromfile(config_path)
    model = build_detector(cfg.model)
    train_detector(model, cfg)


if __name__ == "__main__":
    main("configs/attn_det.py")
