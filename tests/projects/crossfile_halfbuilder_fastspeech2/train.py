import argparse

import torch
import yaml

from model import FastSpeech2Loss
from utils.model import get_model, get_param_num


def main(args, configs):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    preprocess_config, model_config, train_config = configs
    loader = torch.load(train_config["path"]["batches"])
    model = get_model(args, configs, device, train=True, fp16=args.fp16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    print("Number of FastSpeech2 Parameters:", get_param_num(model))
    loss_fn = FastSpeech2Loss().to(device)
    for step, (texts, mels) in enumerate(loader):
        output = model(texts.to(device))
        loss = loss_fn(mels.to(device), output)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--restore_step", type=int, default=0)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("-p", "--preprocess_config", type=str, required=True)
    parser.add_argument("-m", "--model_config", type=str, required=True)
    parser.add_argument("-t", "--train_config", type=str, required=True)
    args = parser.parse_args()
    configs = tuple(yaml.load(open(path), Loader=yaml.FullLoader)
                    for path in (args.preprocess_config, args.model_config, args.train_config))
    main(args, configs)
