import torch

from dinov2.models.vision_transformer import vit_small


def build_model_for_eval():
    model = vit_small()
    return model.cuda().half()


@torch.no_grad()
def eval_knn(images):
    model = build_model_for_eval()
    train_features = model.extract_features(images.cuda().half())
    return train_features @ train_features.T
