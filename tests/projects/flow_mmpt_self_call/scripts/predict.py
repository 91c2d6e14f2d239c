import sys

from mmpt.evaluators import NLGPredictor


def main(loader):
    predictor = NLGPredictor(sys.argv[1])
    return predictor.predict_loop(loader)
