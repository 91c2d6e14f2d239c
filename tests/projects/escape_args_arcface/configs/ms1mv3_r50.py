from types import SimpleNamespace

config = SimpleNamespace(
    network="mbf", embedding_size=16, num_classes=20, fp16=True, lr=0.1, momentum=0.9,
    weight_decay=5e-4, device="cuda", num_epoch=1,
)
