import torch

from tagger.common.registrable import Registrable


class Seq2SeqEncoder(torch.nn.Module, Registrable):
    def get_output_dim(self):
        raise NotImplementedError
