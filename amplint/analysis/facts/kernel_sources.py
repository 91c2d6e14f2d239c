"""Whether the project's own C++/CUDA source of a compiled extension runs any one floating
dtype, half included, one tensor at a time (AMP151): microsoft/Swin-Transformer's
`swin_window_process`, built by kernels/window_process/setup.py from a .cpp and a .cu whose
every `AT_DISPATCH_FLOATING_TYPES_AND_HALF` takes half, and whose every function takes one
tensor. Such a kernel has no dtype to mismatch under autocast: what it is given, it runs.

Read from disk, like `python_source_near`: the `setup.py` of the file's folder or a parent that
builds the extension as `CUDAExtension("name", ["a.cpp", "b.cu"])` (literal sources only). An
extension built any other way, a source missing, a dispatch without half, a `data_ptr<float>`,
or a function taking two tensors: not known to take half, and AMP151 stays as it was.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Dict, Iterator, List, Optional

_BUILD = re.compile(
    r"\b(?:CUDAExtension|CppExtension)\(\s*(?:name\s*=\s*)?['\"]([\w.]+)['\"]\s*,"
    r"\s*(?:sources\s*=\s*)?\[([^\]]*)\]")
_LITERAL = re.compile(r"\s*['\"]([^'\"]+)['\"]\s*")
_DISPATCH = re.compile(r"\bAT_DISPATCH_(\w+)\s*\(([^\"]*)")
_FLOAT_ONLY = re.compile(r"\b(?:data_ptr|data)\s*<\s*(?:float|double)\s*>")
_PARAMETERS = re.compile(r"\b\w+\s*\(([^(){};]*)\)\s*(?:const\s*)?[{;]")
_TENSOR = re.compile(r"\bTensor\b")
# not read: Swin's `//at::Tensor & output,`, a parameter left commented out
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def half_kernels_near(path: str,
                      read: Optional[Callable[[str], Optional[str]]] = None) -> Callable[[str], bool]:
    """`half_kernel(M)` for a file: whether the extension module `M` it imports is built by a
    `setup.py` in the file's folder or a parent from sources that all take half. `read(path)`:
    a file's text or None (the project pass's files first); the disk by default."""
    read = read or read_text
    setups: Dict[str, Dict[str, List[str]]] = {}
    sources_known: Dict[str, bool] = {}

    def takes_half(source: str) -> bool:
        if source not in sources_known:
            sources_known[source] = _takes_half(read(source))
        return sources_known[source]

    def test(name: str) -> bool:
        for folder in folders_up(os.path.dirname(path)):
            setup = os.path.join(folder, "setup.py")
            if setup not in setups:
                setups[setup] = _extensions_built(read(setup), folder)
            sources = setups[setup].get(name)
            if sources is not None:
                return bool(sources) and all(map(takes_half, sources))
        return False

    return test


def folders_up(folder: str, levels: int = 8) -> Iterator[str]:
    """`folder` and its parents, nearest first, at most `levels` of them."""
    for _ in range(levels):
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _extensions_built(text: Optional[str], folder: str) -> Dict[str, List[str]]:
    """Extension module name (its last dotted part) -> its source paths; [] when a source is
    not a string literal."""
    built: Dict[str, List[str]] = {}
    for match in _BUILD.finditer(text or ""):
        items = [item for item in match.group(2).split(",") if item.strip()]
        literals = [_LITERAL.fullmatch(item) for item in items]
        name = match.group(1).rsplit(".", 1)[-1]
        built[name] = [] if not all(literals) else [
            os.path.join(folder, literal.group(1)) for literal in literals if literal]
    return built


def _takes_half(text: Optional[str]) -> bool:
    """Every dispatch of the source takes half, no pointer is read as float, and no function
    takes more than one tensor (the .cpp beside the .cu only declares and binds)."""
    if text is None:
        return False
    text = _COMMENT.sub(" ", text)
    return not _FLOAT_ONLY.search(text) and all(
        _dispatches_half(macro, head) for macro, head in _DISPATCH.findall(text)
    ) and all(_one_tensor(parameters) for parameters in _PARAMETERS.findall(text))


def _dispatches_half(macro: str, head: str) -> bool:
    """`AT_DISPATCH_FLOATING_TYPES_AND_HALF(...)`, or `..._AND2(at::ScalarType::Half, ...)`."""
    return "HALF" in macro or "REDUCED" in macro or ("_AND" in macro and "Half" in head)


def _one_tensor(parameters: str) -> bool:
    return "vector" not in parameters and "TensorList" not in parameters and \
        len(_TENSOR.findall(parameters)) <= 1


def read_text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
