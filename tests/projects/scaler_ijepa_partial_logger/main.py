import argparse

import yaml

from src.train import main as app_main

parser = argparse.ArgumentParser()
parser.add_argument("--fname", type=str, default="configs/in1k_vitb16_ep300.yaml")

if __name__ == "__main__":
    args = parser.parse_args()
    with open(args.fname, "r") as y_file:
        params = yaml.load(y_file, Loader=yaml.FullLoader)
    app_main(args=params)
