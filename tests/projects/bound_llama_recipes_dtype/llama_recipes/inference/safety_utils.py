import torch

from llama_recipes.utils.config_utils import scoring_dtype


class SafetyScorer:
    def __init__(self, classifier, inference_config):
        self.classifier = classifier
        self.dtype = scoring_dtype(inference_config)

    def logits(self, input_ids):
        with torch.autocast("cuda"):
            return self.classifier(input_ids).logits

    def unsafe_probability(self, logits, banned):
        scores = logits.to(self.dtype)
        scores = scores.masked_fill(banned, -1e9)
        return scores.softmax(-1)[..., 1]
