import argparse

import torch

from training import networks


def load_generator(path, device):
    G = networks.Generator(z_dim=512, w_dim=512, img_resolution=64, img_channels=3)
    G.load_state_dict(torch.load(path, map_location="cpu")["G_ema"])
    return G.eval().requires_grad_(False).to(device)


def generate_images(network_pkl, seeds, outdir, fp16):
    device = torch.device("cuda")
    G = load_generator(network_pkl, device)
    if fp16:
        G = G.half()
    for seed in seeds:
        z = torch.from_numpy(torch.randn(1, G.z_dim).numpy()).to(device)
        if fp16:
            z = z.half()
        img = G(z, truncation_psi=0.7)
        img = (img.float().permute(0, 2, 3, 1) * 127.5 + 128).clamp(0, 255).to(torch.uint8)
        torch.save(img.cpu(), f"{outdir}/seed{seed:04d}.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--network", required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--outdir", default="out")
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    generate_images(args.network, args.seeds, args.outdir, args.fp16)
