"""General-purpose training script for image-to-image translation."""
import time

from data import create_dataset
from models import create_model
from options.train_options import TrainOptions

if __name__ == "__main__":
    opt = TrainOptions().parse()
    dataset = create_dataset(opt)
    model = create_model(opt)
    model.setup(opt)
    for epoch in range(opt.epoch_count, opt.n_epochs + 1):
        epoch_start_time = time.time()
        for i, data in enumerate(dataset):
            model.set_input(data)
            model.optimize_parameters()
        model.update_learning_rate()
