"""Module call tracking through torch's global module hooks.

Keeps the stack of modules being run, how many of them hold half parameters (a "half module's
forward", for AMP101), and calls checks on module entry (AMP103)."""

from __future__ import annotations

from typing import Callable, List, Tuple

import torch
from torch.nn.modules import module as _module

_HALF = (torch.float16, torch.bfloat16)


def _first_param_is_half(module) -> bool:
    for p in module._parameters.values():
        if p is not None:
            return p.dtype in _HALF
    for p in module.parameters():
        return p.dtype in _HALF
    return False


class ModuleTracker:
    """Installs a global forward pre-hook and an always-called forward hook while active."""

    def __init__(self):
        self.stack: List[Tuple[torch.nn.Module, bool]] = []
        self.half_depth = 0
        self.amp103_done = False  # reset at every outermost module call
        self.callbacks: List[Callable] = []  # callback(module, outermost)
        self._handles = []

    def start(self):
        self._handles = [
            _module.register_module_forward_pre_hook(self._pre),
            _module.register_module_forward_hook(self._post, always_call=True),
        ]

    def stop(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self.stack.clear()
        self.half_depth = 0

    def innermost(self):
        return self.stack[-1][0] if self.stack else None

    def _pre(self, module, args):
        with torch._C.DisableTorchFunction():
            half = _first_param_is_half(module)
            outermost = not self.stack
            self.stack.append((module, half))
            if half:
                self.half_depth += 1
            if outermost:
                self.amp103_done = False
            for callback in self.callbacks:
                callback(module, outermost)

    def _post(self, module, args, output):
        if self.stack:
            _, half = self.stack.pop()
            if half:
                self.half_depth -= 1
