model = dict(name="net", dim=32, num_classes=4)
optimizer = dict(lr=3e-4, weight_decay=0.05)
epochs = 10
