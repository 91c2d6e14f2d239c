"""The outer loop: every phase (G main, D main, G reg, D reg) steps its own optimizer once per
batch, then the shared scaler updates once."""

import torch

from training.phase_step import run_phase


class Phase:
    def __init__(self, name, module, opt):
        self.name = name
        self.module = module
        self.opt = opt


def training_loop(G, D, loss_fn, loader, total_kimg):
    phases = [
        Phase("Gmain", G, torch.optim.Adam(G.parameters(), lr=0.0025)),
        Phase("Dmain", D, torch.optim.Adam(D.parameters(), lr=0.002)),
    ]
    scaler = torch.amp.GradScaler("cuda")
    for cur_nimg, batch in enumerate(loader):
        for phase in phases:
            run_phase(phase, loss_fn, batch, scaler)
        scaler.update()
        if cur_nimg >= total_kimg * 1000:
            break
