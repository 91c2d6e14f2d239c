_base_ = [
    "mmdet::_base_/models/retinanet_r50_fpn.py",
    "mmdet::_base_/datasets/coco_detection.py",
    "mmdet::_base_/schedules/schedule_1x.py",
    "mmdet::_base_/default_runtime.py",
]
custom_imports = dict(imports=["mmdet_custom.models"], allow_failed_imports=False)

model = dict(bbox_head=dict(loss_cls=dict(type="ProbFocalLoss", gamma=2.0, loss_weight=1.0)))

optim_wrapper = dict(
    type="AmpOptimWrapper",
    optimizer=dict(type="SGD", lr=0.01, momentum=0.9, weight_decay=0.0001),
)
