"""Translate the errors and warnings torch raises for AMP hazards into rule codes.

A monitor calls :func:`code_for_exception` on an exception that leaves its block, so a hazard
that no check saw beforehand (e.g. ``scaler.unscale_`` on fp16 gradients, a scaler stepped
without ``update()``) is still reported with its code at the user's line.
"""

from __future__ import annotations

from typing import Optional, Tuple

# (code, exception type name or None for any, substring of the message)
_EXCEPTIONS: Tuple[Tuple[str, Optional[str], str], ...] = (
    ("AMP101", "RuntimeError", "Index put requires the source and destination dtypes match"),
    ("AMP102", "RuntimeError", "are unsafe to autocast"),
    ("AMP103", "ValueError", "Attempting to unscale FP16 gradients"),
    ("AMP110", "RuntimeError", "without overflow"),
    ("AMP121", "RuntimeError", "step() has already been called since the last update()"),
    ("AMP122", "AssertionError", "Attempted step but _scale is None"),
    ("AMP122", "AssertionError", "Attempted unscale_ but _scale is None"),
    # update() with no inf check recorded: the optimizer was stepped directly, not by scaler.step
    ("AMP127", "AssertionError", "No inf checks were recorded prior to update"),
    ("AMP123", "RuntimeError", "unscale_() has already been called on this optimizer"),
    ("AMP125", "RuntimeError", "Closure use is not currently supported"),
    ("AMP131", "TypeError", "missing 1 required positional argument: 'device_type'"),
    ("AMP131", "ValueError", "Expected `device_type` of type `str`"),
    ("AMP131", "ValueError", "Expected device_type of type str"),
)

# (code, warning category name, substring)
_WARNINGS: Tuple[Tuple[str, str, str], ...] = (
    ("AMP130", "FutureWarning", "is deprecated. Please use `torch.amp."),
)


def code_for_exception(exc: BaseException) -> Optional[str]:
    """The rule code whose hazard raises ``exc``, or None."""
    text = str(exc)
    names = {cls.__name__ for cls in type(exc).__mro__}
    for code, type_name, needle in _EXCEPTIONS:
        if (type_name is None or type_name in names) and needle in text:
            return code
    return None


def code_for_warning(category: type, message: str) -> Optional[str]:
    """The rule code a warning announces (AMP130 for the deprecated ``torch.cuda.amp`` API)."""
    names = {cls.__name__ for cls in category.__mro__}
    for code, cat, needle in _WARNINGS:
        if cat in names and needle in message:
            return code
    return None


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` -- how reports show an error."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
