"""The half models a function's own locals hold, read from its portable summary: a local cast
to half by assignment or in place, and an argument that passes one (or a cast written in the
call). Shared by the parameter passes (half_params.py, half_param_flow.py)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from amplint.analysis.project.halfspread import STATEMENT_CASTS
from amplint.analysis.project.flowvalues import plain_local


def half_locals(function) -> Dict[str, Tuple[str, int]]:
    """name -> (dtype, line of the cast or 0) for each local (not a parameter) the function
    casts to half, by assignment or in place."""
    lines = {}
    for receiver, attr, _text, line in function.dynamic:
        if receiver[0] == "local" and attr in STATEMENT_CASTS:
            lines.setdefault(plain_local(receiver[1]), (STATEMENT_CASTS[attr], line))
    found: Dict[str, Tuple[str, int]] = {}
    for name, values in function.assigns.items():
        for value in values:
            dtype = half_dtype(value)
            if dtype is not None:
                found[name] = (dtype, lines.get(name, (dtype, 0))[1])
                break
    for name, cast in lines.items():
        found.setdefault(name, cast)
    return {name: cast for name, cast in found.items() if name not in function.params}


def half_dtype(value) -> Optional[str]:
    if value[0] == "half":
        return value[2]
    if value[0] == "any":
        for item in value[1]:
            dtype = half_dtype(item) if item is not None else None
            if dtype is not None:
                return dtype
    return None


def passed_half(value, halves) -> Optional[Tuple[str, str, int]]:
    """(name, dtype, cast line) when an argument is a half local or a cast written in the call."""
    if value[0] == "local" and value[1] in halves:
        return (value[1],) + halves[value[1]]
    if value[0] == "half" and value[1][0] == "local":
        return value[1][1], value[2], 0
    return None
