import torch

from mmpt.models import MMFusionNLG


class NLGPredictor:
    def __init__(self, checkpoint):
        self.model = MMFusionNLG()
        self.model.load_state_dict(torch.load(checkpoint))

    def predict_loop(self, loader):
        results = []
        self.model.eval()
        for caps, cmasks in loader:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
                results.append(self.model.generate(caps, cmasks))
        return results
