model = dict(type="SegNet", dim=32, depth=2, num_classes=4)
