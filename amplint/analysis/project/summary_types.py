"""What a per-module summary holds (plain data; summary.py makes them from one parse)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.flowfacts import FlowFacts
from amplint.analysis.project.frameworks import Setting
from amplint.analysis.project.lines import node_lines


@dataclass(frozen=True)
class Origin:
    """Where a region comes from, to cite: "the autocast region at train.py:12"."""

    what: str  # "the autocast region" | "the autocast decorator" | "the framework autocast region"
    path: str
    line: int


@dataclass(frozen=True)
class RegionInfo:
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    origin: Origin
    # its autocast passes `cache_enabled=False`: no weight cast is kept for a later forward
    # (AMP150 reads it in the files the region reaches)
    cache_off: bool = False


@dataclass(frozen=True)
class ExternalCall:
    """A call of something another module may define. `kind`: "call" (call the name: a
    function), "instance" (call an instance of class `ref`: its forward), "method" (call method
    `attr` of an instance of class `ref`)."""

    ref: str
    kind: str
    attr: str
    line: int  # 0: not computed yet, see ModuleSummary.call_line
    index: int = -1  # the call's node in ModuleSummary's pending list
    # a "call"'s arguments: (how many positional, the keywords' names); None with a `*`/`**`
    # argument. Which parameters the callee gets its defaults for (facts/param_defaults.py).
    args: Optional[Tuple[int, Tuple[str, ...]]] = None


@dataclass
class FunctionSummary:
    key: str  # "f", "C.m", "f.inner"
    calls: List[ExternalCall] = field(default_factory=list)  # not under a region of this file
    local: List[str] = field(default_factory=list)  # same-file callees (keys), same condition
    decided: bool = False  # a decorator or a caller in this file already sets its region
    self_calls: List[ExternalCall] = field(default_factory=list)  # `self.m(...)`, no region here


@dataclass
class ClassSummary:
    name: str
    bases: Tuple[str, ...]  # "@Local" for a class of this file, else the qualified reference
    methods: Tuple[str, ...]
    decorators: Tuple[str, ...]  # qualified references of the decorators' callables


@dataclass
class ModuleSummary:
    path: str
    functions: Dict[str, FunctionSummary] = field(default_factory=dict)
    classes: Dict[str, ClassSummary] = field(default_factory=dict)
    imports: Dict[str, str] = field(default_factory=dict)  # module-level name -> reference
    roots: List[Tuple[ExternalCall, RegionInfo]] = field(default_factory=list)
    settings: List[Setting] = field(default_factory=list)
    # classes whose instances a framework runs (accelerator.prepare(model), Trainer(model=m)):
    # (framework, class reference as in `bases`)
    prepared: List[Tuple[str, str]] = field(default_factory=list)
    # what names may hold, for the project's class flow (flowfacts.py, classflow.py)
    flow: Optional[FlowFacts] = None
    region_infos: List[RegionInfo] = field(default_factory=list)  # regions of flow.roots
    # `self.m(...)` under this file's own active region of a method of the same class C:
    # ("C.caller", "m", line, region index, "C.method" whose decorator or `with` opens it)
    self_roots: List[Tuple[str, str, int, int, str]] = field(default_factory=list)
    regions: List[RegionInfo] = field(default_factory=list)  # every active region the file opens
    # Lines of calls inside functions are computed on first use (one code generation of the
    # module), since most files' calls are never cited; `release()` drops the module.
    _module: Optional[cst.Module] = None
    _nodes: List[cst.CSTNode] = field(default_factory=list)
    _lines: Optional[List[int]] = None

    def call_line(self, call: ExternalCall) -> int:
        if call.line or call.index < 0:
            return call.line
        if self._lines is None:
            if self._module is None:
                return 0
            found = node_lines(self._module, self._nodes)
            self._lines = [found.get(id(node), 0) for node in self._nodes]
            self.release()
        return self._lines[call.index]

    def release(self) -> None:
        self._module = None
        self._nodes = []

    def resolve_all_lines(self) -> None:
        """Compute every call's line now (one code generation, if any is pending) and drop
        the tree: the summary becomes plain data."""
        if self._lines is None and self._module is not None and self._nodes:
            found = node_lines(self._module, self._nodes)
            self._lines = [found.get(id(node), 0) for node in self._nodes]
        self.release()


def top_level_functions(summary: ModuleSummary) -> List[str]:
    """The keys an EntryRegion can name: module functions and methods of module classes."""
    return [
        key for key in summary.functions
        if key.count(".") == 0 or (key.count(".") == 1 and key.split(".")[0] in summary.classes)
    ]


def call_arguments(call: cst.Call) -> Optional[Tuple[int, Tuple[str, ...]]]:
    """ExternalCall.args of `call`."""
    positional, keywords = 0, []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            positional += 1
        else:
            keywords.append(arg.keyword.value)
    return positional, tuple(keywords)
