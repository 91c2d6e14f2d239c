import torch

from model import FastSpeech2


def get_model(args, configs, device, train=False, fp16=False):
    preprocess_config, model_config, train_config = configs
    model = FastSpeech2(preprocess_config, model_config).to(device)
    if args.restore_step:
        ckpt = torch.load(f"{train_config['path']['ckpt_path']}/{args.restore_step}.pth.tar")
        model.load_state_dict(ckpt["model"])
    if fp16:
        model = model.half()
    if train:
        model.train()
    else:
        model.eval()
    model.requires_grad_(train)
    return model


def get_param_num(model):
    return sum(param.numel() for param in model.parameters())
