from accelerate import Accelerator
from torch import nn

from dalle2_pytorch.dalle2_pytorch import Decoder


class DecoderTrainer(nn.Module):
    def __init__(self, decoder: Decoder, accelerator: Accelerator):
        super().__init__()
        self.decoder = decoder
        self.accelerator = accelerator

    def forward(self, image, times):
        with self.accelerator.autocast():
            loss = self.decoder(image, times)
        self.accelerator.backward(loss)
        return loss.item()
