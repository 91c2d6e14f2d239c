"""Per-iteration hooks of the trainer, as a mixin (facebookresearch/detectron2 keeps its hooks in
engine/hooks.py and calls `after_step` once per iteration from `TrainerBase.train`): the scaler's
update and the iteration's bookkeeping."""


class StepHooksMixin:
    def after_step(self):
        self.scaler.update()
        self.storage.append(self.scaler.get_scale())
