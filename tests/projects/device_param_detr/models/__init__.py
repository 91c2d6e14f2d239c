from .detr import DETR, SetCriterion


def build_model(args):
    model = DETR(num_classes=args.num_classes)
    criterion = SetCriterion(num_classes=args.num_classes)
    return model, criterion
