import argparse


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="cycle_gan", help="chooses which model to use. [cycle_gan | pix2pix]")
    parser.add_argument("--lr", type=float, default=0.0002)
    return parser.parse_args()
