from model.fastspeech2 import FastSpeech2
from model.loss import FastSpeech2Loss
