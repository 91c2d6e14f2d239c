"""
Generate a large batch of image samples from a model and save them as a large
numpy array. This can be used to produce samples for FID evaluation.
"""

import argparse

import torch as th

from guided_diffusion.script_util import create_model_and_diffusion, model_and_diffusion_defaults


def main():
    args = create_argparser().parse_args()
    model, diffusion = create_model_and_diffusion(
        **{k: getattr(args, k) for k in model_and_diffusion_defaults().keys()}
    )
    model.load_state_dict(th.load(args.model_path, map_location="cpu"))
    model.to("cuda")
    if args.use_fp16:
        model.convert_to_fp16()
    model.eval()
    sample = diffusion.p_sample_loop(model, (args.batch_size, 3, args.image_size, args.image_size))
    print(sample.shape)


def create_argparser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_path", default="")
    parser.add_argument("--batch_size", type=int, default=16)
    for k, v in model_and_diffusion_defaults().items():
        parser.add_argument(f"--{k}", default=v, type=type(v))
    return parser


if __name__ == "__main__":
    main()
