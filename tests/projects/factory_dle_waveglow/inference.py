import torch

import models


def main(args, mels):
    waveglow = models.get_model(args.config, args.device, fp16=args.fp16)
    waveglow.eval()
    with torch.no_grad():
        audios = waveglow.infer(mels, sigma=args.sigma_infer)
    return audios
