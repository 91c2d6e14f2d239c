"""Find the user's frame: the innermost stack frame outside torch and amplint."""

from __future__ import annotations

import os
import sys
from types import FrameType, TracebackType
from typing import List, Optional, Tuple

import torch

import amplint

_SKIP_PREFIXES = tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (torch, amplint)
)
_SKIP_FILES = {
    os.path.abspath(f)
    for f in (__import__("contextlib").__file__, __import__("functools").__file__)
}


def is_internal(filename: str) -> bool:
    """True for torch's and amplint's own files (and contextlib/functools wrappers)."""
    if filename.startswith(_SKIP_PREFIXES) or filename in _SKIP_FILES:
        return True
    if not os.path.isabs(filename) and not filename.startswith("<"):
        return is_internal(os.path.abspath(filename))
    return False


def user_frame(start: Optional[FrameType] = None) -> Optional[FrameType]:
    """The innermost frame (from ``start``, default the caller) that is user code."""
    frame = start if start is not None else sys._getframe(1)
    while frame is not None:
        if not is_internal(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def user_location(start: Optional[FrameType] = None) -> Tuple[str, int]:
    """``(filename, line)`` of :func:`user_frame`; ``("<unknown>", 0)`` when there is none."""
    frame = user_frame(start if start is not None else sys._getframe(1))
    if frame is None:
        return "<unknown>", 0
    return frame.f_code.co_filename, frame.f_lineno


def user_stack(limit: int = 4, start: Optional[FrameType] = None) -> List[str]:
    """Up to ``limit`` user frames, innermost first, as ``file:line`` strings."""
    frame = start if start is not None else sys._getframe(1)
    out: List[str] = []
    while frame is not None and len(out) < limit:
        if not is_internal(frame.f_code.co_filename):
            out.append(f"{frame.f_code.co_filename}:{frame.f_lineno}")
        frame = frame.f_back
    return out


def traceback_location(tb: Optional[TracebackType]) -> Tuple[str, int]:
    """The innermost user frame of a traceback (where the user's code called into torch)."""
    found = ("<unknown>", 0)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not is_internal(filename):
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found
