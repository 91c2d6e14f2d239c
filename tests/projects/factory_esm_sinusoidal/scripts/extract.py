import torch

from esm.model import ProteinBertModel


def extract(batches, alphabet_size=33):
    model = ProteinBertModel(alphabet_size).half().cuda().eval()
    with torch.no_grad():
        return [model(tokens.cuda()) for tokens in batches]
