"""Runs a program under a TorchFunctionMode that records the dtype of every tensor each source
expression produces, and compares it with what amplint's dtype fact (FileFacts.dtypes) predicts
for the same expression. Shared by tests/test_dtype_proof.py (generated programs, fixtures)."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.dtype_value import ELIGIBLE

Span = Tuple[int, int, int, int]  # line, column, end line, end column (columns 0-based)


def dtype_name(dtype) -> str:
    text = str(dtype).replace("torch.", "")
    if text in ("float16", "bfloat16", "float32", "float64", "bool"):
        return text
    if text.startswith(("int", "uint")):
        return "integer"
    return text


def record(source: str, filename: str, namespace: dict) -> Dict[Span, Set[str]]:
    """Execute `source`; the dtypes each expression span produced. An exception stops the
    program; what ran before it is still returned."""
    import torch
    from torch.overrides import TorchFunctionMode

    code = compile(source, filename, "exec")
    seen: Dict[Span, Set[str]] = defaultdict(set)
    on_region: Dict[Span, Set[str]] = defaultdict(set)  # the same, while autocast was on

    def autocast_on() -> bool:
        return torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor):
                frame = sys._getframe(1)
                while frame is not None and frame.f_code.co_filename != filename:
                    frame = frame.f_back
                if frame is not None:
                    positions = list(frame.f_code.co_positions())
                    index = frame.f_lasti // 2
                    if 0 <= index < len(positions) and None not in positions[index]:
                        line, end_line, col, end_col = positions[index]
                        seen[(line, col, end_line, end_col)].add(dtype_name(out.dtype))
                        if autocast_on():
                            on_region[(line, col, end_line, end_col)].add(dtype_name(out.dtype))
            return out

    def returns(frame, event, arg):
        """A call of the program's own function: the tensor it returns is the value of the
        call expression in the caller (Python 3.11 keeps the caller at its CALL instruction)."""
        if event != "return" or not isinstance(arg, torch.Tensor):
            return
        caller = frame.f_back
        if frame.f_code.co_filename != filename or caller is None \
                or caller.f_code.co_filename != filename:
            return
        positions = list(caller.f_code.co_positions())
        index = caller.f_lasti // 2
        if 0 <= index < len(positions) and None not in positions[index]:
            line, end_line, col, end_col = positions[index]
            seen[(line, col, end_line, end_col)].add(dtype_name(arg.dtype))
            if autocast_on():
                on_region[(line, col, end_line, end_col)].add(dtype_name(arg.dtype))

    namespace.setdefault("__name__", "amplint_dtype_program")
    with Recorder():
        sys.setprofile(returns)
        try:
            exec(code, namespace)
        except Exception:
            pass
        finally:
            sys.setprofile(None)
    return Observed(seen, on_region)


class Observed(dict):
    """What each span produced; `on_region`: what it produced while autocast was on."""

    def __init__(self, seen, on_region) -> None:
        super().__init__(seen)
        self.on_region = dict(on_region)


def predictions(source: str, entries=()) -> Dict[Span, object]:
    """The dtype fact's value for every expression it valued, by span (`entries`: regions the
    project pass would put around the program's functions)."""
    return _predictions(source, entries)[0]


def _predictions(source: str, entries=()):
    """(predictions by span, the line ranges of the functions the fact read along a region's
    call: their values hold on the region's paths only, facts/dtype_paths.py)."""
    module = cst.parse_module(source)
    facts = FileFacts(module, tuple(entries))
    values = facts.dtypes.values
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found: Dict[Span, object] = {}
    for node, span in positions.items():
        value = values.get(id(node))
        if value is not None:
            key = (span.start.line, span.start.column, span.end.line, span.end.column)
            found[key] = value
    paths = [(positions[frame.node].start.line, positions[frame.node].end.line)
             for frame in facts.tree.frames if id(frame) in facts.dtypes.path_functions]
    return found, paths


def compare(source: str, observed: Dict[Span, Set[str]], region_dtype: str,
            entries=()) -> Tuple[int, int, List[str]]:
    """(expressions checked, exact predictions confirmed, failures)."""
    predicted, paths = _predictions(source, entries)
    lines = source.splitlines()
    checked = confirmed = 0
    failures: List[str] = []
    on_region = getattr(observed, "on_region", None)
    for span, dtypes in sorted(observed.items()):
        value = predicted.get(span)
        if value is None:
            continue  # unknown: allowed
        if on_region is not None and any(start <= span[0] <= end for start, end in paths):
            # read along the region's call: the value holds where the region runs it
            dtypes = on_region.get(span, set())
            if not dtypes:
                continue
        checked += 1
        options = {region_dtype if o == "autocast" else o for o in value.options}
        if value.conditional and not dtypes <= ELIGIBLE:
            continue  # the prediction assumed float16/bfloat16/float32 operands
        if not dtypes <= options:
            text = lines[span[0] - 1][span[1]:span[3]] if span[0] == span[2] else "?"
            failures.append(f"line {span[0]} `{text}`: predicted {sorted(options)}, ran {sorted(dtypes)}")
        elif len(options) == 1:
            confirmed += 1
    return checked, confirmed, failures
