from classy_vision.tasks.classification_task import ClassificationTask


class FineTuningTask(ClassificationTask):
    def __init__(self, model, loss, optimizer, amp_enabled=False, freeze_trunk=True):
        super().__init__(model, loss, optimizer, amp_enabled=amp_enabled)
        if freeze_trunk:
            for param in model.trunk.parameters():
                param.requires_grad = False
