model = dict(type="Net", dim=32, num_classes=4)
loss = dict(type="BCEDice")
