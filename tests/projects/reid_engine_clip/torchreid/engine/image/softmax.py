import torch
import torch.nn.functional as F

from ..engine import Engine


class ImageSoftmaxEngine(Engine):
    """Softmax-loss engine: its forward_backward runs the loss under autocast, scales it and
    calls the base engine's clip_and_step."""

    def __init__(self, datamanager, model, optimizer, label_smooth=True, use_gpu=True):
        super().__init__(datamanager, use_gpu)
        self.model = model
        self.optimizer = optimizer
        self.label_smooth = 0.1 if label_smooth else 0.0
        self.register_model("model", model, optimizer)

    def forward_backward(self, data):
        imgs, pids = data["img"], data["pid"]
        if self.use_gpu:
            imgs, pids = imgs.cuda(), pids.cuda()
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_gpu):
            outputs = self.model(imgs)
            loss = F.cross_entropy(outputs, pids, label_smoothing=self.label_smooth)
        self.scaler.scale(loss).backward()
        self.clip_and_step()
        return {"loss": loss.item()}
