from accelerate import Accelerator

from dalle2_pytorch.dalle2_pytorch import Decoder, Unet
from dalle2_pytorch.trainer import DecoderTrainer


def main(loader):
    decoder = Decoder(Unet(64))
    trainer = DecoderTrainer(decoder, Accelerator(mixed_precision="fp16"))
    for image, times in loader:
        trainer(image, times)
