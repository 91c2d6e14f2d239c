'''Some helper functions for PyTorch, including:
    - progress_bar: progress bar mimic xlua.progress.
    - OptimizerStepper: steps the optimizer every `accum` batches.
'''
import sys
import time


def progress_bar(current, total, msg=None):
    sys.stdout.write(' [%d/%d] %s\r' % (current + 1, total, msg or ''))


class OptimizerStepper(object):
    '''Gradient accumulation: the optimizer steps once every `accum` batches.'''

    def __init__(self, optimizer, accum=1, scaler=None):
        self.optimizer = optimizer
        self.accum = accum
        self.scaler = scaler
        self.started = time.time()

    def step(self, batch_idx):
        if (batch_idx + 1) % self.accum:
            return
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.optimizer.zero_grad()
