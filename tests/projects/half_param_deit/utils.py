import torch

from models import deit_tiny_patch16_224


def build_model(args):
    model = deit_tiny_patch16_224(num_classes=args.nb_classes)
    if args.half_weights:
        model = model.half()
    return model


def build_teacher(args):
    return deit_tiny_patch16_224(num_classes=args.nb_classes)


def save_on_master(state, path):
    torch.save(state, path)
