import argparse

from mmcv import Config

from mmdetx.apis import train_detector
from mmdetx.models import build_detector


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    model = build_detector(cfg.model)
    train_detector(model, cfg)


if __name__ == "__main__":
    main()
