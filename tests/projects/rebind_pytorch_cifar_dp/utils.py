'''Some helper functions for PyTorch, including:
    - progress_bar: progress bar mimic xlua.progress.
    - parallelize: the model on its device, over every visible GPU (this fork).
'''
import sys

import torch


def progress_bar(current, total, msg=None):
    sys.stdout.write(' [%d/%d] %s\r' % (current + 1, total, msg or ''))
    if current == total - 1:
        sys.stdout.write('\n')


def parallelize(net, device):
    net = net.to(device)
    if device == 'cuda' and torch.cuda.device_count() > 1:
        net = torch.nn.DataParallel(net)
    return net
