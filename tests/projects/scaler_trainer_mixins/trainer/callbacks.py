"""Callback plumbing of the trainer (transformers' trainer_callback.py shape)."""


class CallbackMixin:
    def on_step_end(self, step):
        for callback in self.callbacks:
            callback(step)
