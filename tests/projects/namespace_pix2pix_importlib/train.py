"""Laid out like junyanz/pytorch-CycleGAN-and-pix2pix (train.py, options/, models/__init__.py's
find_model_using_name, models/networks.py's GANLoss) in a fork that trains under autocast: the
model class is found by importing "models." + name + "_model" and scanning that module's
__dict__."""
import torch

from models import create_model
from options import parse

if __name__ == "__main__":
    opt = parse()
    model = create_model(opt)
    scaler = torch.amp.GradScaler("cuda")
    for data in []:
        model.set_input(data)
        with torch.autocast("cuda"):
            model.forward()
            loss_G = model.compute_G_loss()
        model.optimizer_G.zero_grad()
        scaler.scale(loss_G).backward()
        scaler.step(model.optimizer_G)
        scaler.update()
