"""Train a diffusion model on images (laid out like openai/guided-diffusion scripts/image_train.py)."""
from guided_diffusion.script_util import create_model_and_diffusion
from guided_diffusion.train_util import TrainLoop


def main():
    model, diffusion = create_model_and_diffusion()
    model.cuda()
    TrainLoop(model=model, diffusion=diffusion, data=[], batch_size=8, microbatch=-1, lr=1e-4).run_loop()


if __name__ == "__main__":
    main()
