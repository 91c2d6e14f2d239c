import torch

from taming.models.vqgan import VQModel


def load_vqgan(ckpt_path=None, embed_dim=256):
    model = VQModel(embed_dim=embed_dim)
    if ckpt_path is not None:
        sd = torch.load(ckpt_path, map_location="cpu")["state_dict"]
        model.load_state_dict(sd, strict=False)
    model.eval()
    # inference only: keep the weights in half to fit the batch
    return model.half()
