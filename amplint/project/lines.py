"""Line numbers of chosen nodes, from one code generation pass over the module."""

from __future__ import annotations

from typing import Dict

import libcst as cst
from libcst._nodes.internal import CodegenState


class _LineState(CodegenState):
    """Code generation that notes the line where each wanted node starts (much cheaper than
    LibCST's PositionProvider, which records a range for every node)."""

    __slots__ = ("wanted", "lines", "_done", "_line")

    def __init__(self, module: cst.Module, wanted) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.lines: Dict[int, int] = {}
        self._done = 0
        self._line = 1

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted and key not in self.lines:
            tokens = self.tokens
            if self._done < len(tokens):
                self._line += "".join(tokens[self._done:]).count("\n")
                self._done = len(tokens)
            self.lines[key] = self._line


def node_lines(module: cst.Module, nodes) -> Dict[int, int]:
    wanted = {id(node) for node in nodes}
    if not wanted:
        return {}
    state = _LineState(module, wanted)
    module._codegen(state)
    return state.lines
