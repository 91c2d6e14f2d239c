from torch import nn

from espnet2.asr.encoder.conformer_encoder import ConformerEncoder


class ESPnetASRModel(nn.Module):
    def __init__(self, vocab_size, encoder):
        super().__init__()
        self.encoder = encoder
        self.ctc_lo = nn.Linear(256, vocab_size)

    def forward(self, speech, speech_mask, text, speech_lengths, text_lengths):
        enc = self.encoder(speech, speech_mask)
        log_probs = self.ctc_lo(enc).log_softmax(-1).transpose(0, 1)
        return nn.functional.ctc_loss(log_probs, text, speech_lengths, text_lengths)


class ASRTask:
    @classmethod
    def build_model(cls, args):
        encoder = ConformerEncoder(input_size=args.input_size, **args.encoder_conf)
        return ESPnetASRModel(args.vocab_size, encoder)
