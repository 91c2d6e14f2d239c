import torch

from heads import RetrievalHead


def evaluate(loader):
    head = RetrievalHead(256).cuda()
    for text, image, mask in loader:
        head(text, image, mask)
