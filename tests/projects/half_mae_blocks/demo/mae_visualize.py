# the demo notebook (demo/mae_visualize.ipynb) as a script, with half-precision inference
import argparse

import torch

import models_mae


def prepare_model(chkpt_dir, fp16=False):
    model = models_mae.mae_vit_large_patch16()
    checkpoint = torch.load(chkpt_dir, map_location="cpu")
    model.load_state_dict(checkpoint["model"], strict=False)
    if fp16:
        model.half()
    return model.cuda().eval()


@torch.no_grad()
def run_one_image(img, key_mask, model):
    x = torch.einsum("nhwc->nchw", img.unsqueeze(dim=0))
    return model(x.cuda().half(), key_mask.cuda())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default="mae_visualize_vit_large.pth")
    args = parser.parse_args()
    model_mae = prepare_model(args.checkpoint, fp16=True)
