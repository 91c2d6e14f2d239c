import torch

from wav2vec2.model import Wav2Vec2Model


def main(batches, fp16=True):
    model = Wav2Vec2Model().cuda().eval()
    if fp16:
        model = model.half()
    with torch.no_grad():
        for audio in batches:
            yield model(audio.cuda().half())
