model = dict(type="RetinaNet", bbox_head=dict(type="SSDHead", dim=32, num_classes=4))
optimizer = dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=0.0001)
lr_config = dict(policy="step", step=[8, 11])
fp16 = dict(loss_scale=512.0)
