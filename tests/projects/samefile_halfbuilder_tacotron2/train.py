import argparse

import torch

from data_utils import TextMelCollate, TextMelLoader
from hparams import create_hparams
from model import Tacotron2
from loss_function import Tacotron2Loss


def load_model(hparams):
    model = Tacotron2(hparams).cuda()
    if hparams.fp16_run:
        model = model.half()
    return model


def train(output_directory, hparams):
    torch.manual_seed(hparams.seed)
    model = load_model(hparams).train()
    learning_rate = hparams.learning_rate
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate,
                                 weight_decay=hparams.weight_decay)
    criterion = Tacotron2Loss()
    trainset = TextMelLoader(hparams.training_files, hparams)
    collate_fn = TextMelCollate(hparams.n_frames_per_step)
    train_loader = torch.utils.data.DataLoader(trainset, batch_size=hparams.batch_size, collate_fn=collate_fn)
    for epoch in range(hparams.epochs):
        for batch in train_loader:
            model.zero_grad()
            x, y = model.parse_batch(batch)
            y_pred = model(x)
            loss = criterion(y_pred, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), hparams.grad_clip_thresh)
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output_directory", type=str)
    args = parser.parse_args()
    train(args.output_directory, create_hparams())
