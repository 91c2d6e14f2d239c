import unittest

import torch
from torch import nn


class TestBlocks(unittest.TestCase):
    def test_frozen_norm_half_input(self):
        norm = nn.BatchNorm2d(4).cuda()
        inputs = torch.rand(2, 4, 8, 8).cuda()
        with torch.cuda.amp.autocast():
            out = norm(inputs.half())
        self.assertEqual(out.dtype, torch.float16)
