"""Shared constants (OpenNMT-py keeps its tokens and defaults in onmt/constants.py)."""


class DefaultTokens:
    PAD = "<blank>"
    BOS = "<s>"
    EOS = "</s>"
    UNK = "<unk>"


# the additive mask of padded keys: "minus infinity" for the attention softmax
MASK_VALUE = 1e18
LABEL_SMOOTHING = 0.1
