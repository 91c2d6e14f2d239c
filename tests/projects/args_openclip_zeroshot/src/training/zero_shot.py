import torch
import torch.nn.functional as F


class ZeroShotEvaluator:
    def __init__(self, classifier):
        self.classifier = classifier

    def _normalize(self, features):
        return features / features.pow(2).sum(dim=-1, keepdim=True).sqrt()

    def run(self, model, dataloader):
        top1, n = 0.0, 0
        with torch.no_grad():
            for images, target in dataloader:
                images = images.to(self.classifier.dtype)
                features = self._normalize(model.encode_image(images))
                logits = 100.0 * features @ self.classifier
                top1 += (logits.argmax(dim=-1) == target).sum().item()
                n += images.size(0)
        return top1 / max(n, 1)


def build_zero_shot_classifier(model, num_classes):
    with torch.no_grad():
        tokens = torch.arange(num_classes).unsqueeze(1)
        class_embeddings = model.encode_text(tokens)
        return F.normalize(class_embeddings, dim=-1).t()


def zero_shot_eval(model, data, epoch, args):
    if "imagenet-val" not in data:
        return {}
    classifier = build_zero_shot_classifier(model, num_classes=10)
    evaluator = ZeroShotEvaluator(classifier)
    top1 = evaluator.run(model, data["imagenet-val"])
    return {"imagenet-zeroshot-val-top1": top1, "epoch": epoch}
