"""Laid out like facebookresearch/swav: hubconf.py's entry points build their network through
one helper that looks the constructor up by name in src/resnet50.py's namespace
(`resnet_models.__dict__[arch]`), and a semi-supervised fine-tuning script (eval_semisup.py)
trains the hub model with AMP."""
import torch

import src.resnet50 as resnet_models

dependencies = ["torch"]
_URL = "https://dl.fbaipublicfiles.com/deepcluster/"


def _swav_model(arch, pretrained=True, checkpoint="swav_800ep_pretrain.pth.tar", **kwargs):
    model = resnet_models.__dict__[arch](normalize=True, **kwargs)
    if pretrained:
        state_dict = torch.hub.load_state_dict_from_url(_URL + checkpoint, map_location="cpu")
        model.load_state_dict({k.replace("module.", ""): v for k, v in state_dict.items()}, strict=False)
    return model


def resnet50(pretrained=True, **kwargs):
    return _swav_model("resnet50", pretrained, **kwargs)


def resnet50w2(pretrained=True, **kwargs):
    return _swav_model("resnet50w2", pretrained, checkpoint="swav_RN50w2_400ep_pretrain.pth.tar", **kwargs)
