def build_model(cfg):
    from .rcnn import GeneralizedRCNN

    return GeneralizedRCNN(cfg["num_classes"])
