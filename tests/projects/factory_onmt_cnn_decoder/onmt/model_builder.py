import torch.nn as nn

from onmt.decoders.cnn_decoder import CNNDecoder
from onmt.models.model import NMTModel


def build_model(opt):
    embeddings = nn.Embedding(opt.vocab_size, opt.hidden_size)
    encoder = nn.Embedding(opt.vocab_size, opt.hidden_size)
    decoder = CNNDecoder(opt.hidden_size, opt.cnn_kernel_width, embeddings)
    return NMTModel(encoder, decoder)
