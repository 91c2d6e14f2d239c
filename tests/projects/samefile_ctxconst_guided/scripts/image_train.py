from guided_diffusion.train_util import TrainLoop


def main(model, diffusion, data):
    loop = TrainLoop(model, diffusion, data, lr=1e-4)
    for batch, cond in data:
        loop.run_step(batch, cond)
