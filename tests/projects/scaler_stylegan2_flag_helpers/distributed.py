import torch


def reduce_sum(tensor):
    return tensor


def get_rank():
    return 0
