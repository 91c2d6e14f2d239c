model = dict(
    type="AttnDetector",
    head=dict(type="AttnHead", dim=32, num_classes=4, loss_cls=dict(type="SigmoidBCELoss")),
)
optimizer = dict(type="SGD", lr=0.01)
fp16 = dict(loss_scale=512.0)
