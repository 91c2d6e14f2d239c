import torch

import losses
from configs.default_config import get_config
from models import ddpm, ncsnpp  # noqa: F401  (registers the models)
from models import utils as mutils


def train(workdir):
    config = get_config()
    score_model = mutils.create_model(config)
    optimizer = torch.optim.Adam(score_model.parameters(), lr=2e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=config.training.mixed_precision)
    loader = torch.load(f"{workdir}/batches.pt")
    for step in range(config.training.n_iters):
        losses.train_step(score_model, next(loader).cuda(), optimizer, scaler, config.training.mixed_precision)
