"""Facts about one file that several rules need, computed once per file.

`FileFacts(module)` walks the module once (`tree`), then derives autocast regions (`regions`),
the same-file call graph (`callgraph`); fp16 scopes, GradScaler facts and def-use facts
(`defuse`) are derived on first use.
"""

from __future__ import annotations

from functools import cached_property
from typing import Optional, Tuple

import libcst as cst

from amplint.analysis.facts.fp16 import Fp16Analysis
from amplint.analysis.facts.names import resolve, resolve_expr, torch_alias, torch_name_free
from amplint.analysis.facts.region_entries import EntryHalf, EntryHalfBase, EntryRegion
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.regions import Enabled, RegionAnalysis
from amplint.analysis.facts.returned_values import returned_by_call
from amplint.analysis.facts.scalers import ScalerAnalysis
from amplint.analysis.facts.tree import CallSite, Collector, Frame

__all__ = ["FileFacts", "Region", "EntryRegion", "Enabled", "CallSite", "Frame"]


class FileFacts:
    def __init__(self, module: cst.Module, entries: Tuple[EntryRegion, ...] = ()) -> None:
        """`entries`: regions the project puts around functions of this file (cross-file calls,
        framework settings); empty when the file is linted on its own."""
        self.module = module
        self.entries = entries
        self.tree = Collector(module)
        if entries:
            self.tree.module_frame.returned = returned_by_call(entries, self.tree) or None
        self.regions = RegionAnalysis(self.tree, entries)
        self.callgraph = self.regions.callgraph

    def release(self) -> None:
        """Break the reference cycles these facts hold (frames and their call sites, the facts
        and the analyses they cache, the collector's handler table; a rule's local class that
        keeps an analysis through a closure), so that reference counting frees the file's tree
        when its last outside reference goes, without a pass of the cyclic collector over it
        (issue 34: each part of a large file). The facts are unusable after."""
        tree = self.__dict__.get("tree")
        if tree is not None:
            for frame in tree.frames:
                frame.__dict__.clear()
        for fact in list(self.__dict__.values()):
            # a rule's local class may keep a fact alive through a closure: empty them all
            if hasattr(fact, "__dict__"):
                fact.__dict__.clear()
        self.__dict__.clear()

    @cached_property
    def bound_values(self):
        """What names, attributes and calls may hold over every binding construct of the file
        (amplint.analysis.facts.bound_values), built on first use."""
        from amplint.analysis.facts.bound_values import BoundValues

        return BoundValues(self.module, self.entries)

    @cached_property
    def param_defaults(self):
        """A parameter's default where every call of the file leaves it out
        (amplint.analysis.facts.param_defaults)."""
        from amplint.analysis.facts.param_defaults import ParamDefaults

        return ParamDefaults(self)

    @cached_property
    def chosen_classes(self):
        """The class a call constructs when a string picks it: a name->class dict, a builder
        given the name, `getattr(module, "Name")` (amplint.analysis.facts.chosen_classes)."""
        from amplint.analysis.facts.chosen_classes import ChosenClasses

        return ChosenClasses(self.tree, self.entries, self.function_returns)

    @cached_property
    def function_returns(self):
        """What a function of this file returns to a call of it
        (amplint.analysis.facts.function_returns)."""
        from amplint.analysis.facts.function_returns import FunctionReturns

        return FunctionReturns(self.tree, self.callgraph, self.entries)

    @cached_property
    def returned_casts(self):
        """id(call) -> (dtype, cast site) for calls of a function of this file that returns a
        model it casts to half (amplint.analysis.facts.returned_casts)."""
        from amplint.analysis.facts.returned_casts import returned_casts

        return returned_casts(self)

    @cached_property
    def remote_casts(self):
        """id(call) -> EntryReturn for calls of another file's builder that returns a model it
        casts to half (amplint.analysis.facts.returned_casts.remote_casts)."""
        from amplint.analysis.facts.returned_casts import remote_casts

        return remote_casts(self)

    @cached_property
    def index(self):
        """Assignments by name, statement order, self-attributes and calls by class, each
        built once (amplint.analysis.facts.index): what a question per statement looks up."""
        from amplint.analysis.facts.index import FileIndex

        return FileIndex(self.tree)

    @cached_property
    def fp16(self) -> Fp16Analysis:
        from amplint.analysis.facts.dtype_fields import field_casts

        halves = tuple(e for e in self.entries if isinstance(e, EntryHalf))
        inherited = tuple(e for e in self.entries if isinstance(e, EntryHalfBase))
        analysis = Fp16Analysis(self.tree, self.callgraph, halves, inherited, self.chosen_classes)
        for call, (dtype, cite) in field_casts(self.tree, self.entries).items():  # `dtype=args.model.param_dtype`
            analysis.half_casts.setdefault(call, dtype)
            analysis.field_cites[call] = cite
        return analysis

    @cached_property
    def half_values(self):
        """float16 tensors outside autocast (amplint.analysis.facts.half_values), for AMP140/AMP141."""
        from amplint.analysis.facts.half_values import Float16Values

        return Float16Values(self)

    @cached_property
    def dtypes(self):
        """The dtypes each tensor expression may have (amplint.analysis.facts.dtypes), read from torch's
        own tables (amplint.analysis.data.dtype_rules)."""
        from amplint.analysis.facts.dtypes import DtypeFacts

        return DtypeFacts(self)

    @cached_property
    def escape(self):
        """Half values of autocast regions and their reads after the region ends
        (amplint.analysis.facts.escape), for AMP105/AMP111."""
        from amplint.analysis.facts.escape import EscapeAnalysis

        return EscapeAnalysis(self)

    @cached_property
    def defuse(self):
        """Def-use questions (amplint.analysis.facts.defuse): is a name rebound, mutated in place or
        passed on between two points; is an expression safe to write twice."""
        from amplint.analysis.facts.defuse import DefUse

        return DefUse(self.module)

    @cached_property
    def deprecated(self):
        """Uses of the deprecated `torch.cuda.amp`/`torch.cpu.amp` APIs and their version gates
        (amplint.analysis.facts.deprecated), for AMP130."""
        from amplint.analysis.facts.deprecated import DeprecatedRefs

        refs = DeprecatedRefs(self)
        refs.walk(self.module)
        return refs

    @cached_property
    def scalers(self) -> ScalerAnalysis:
        return ScalerAnalysis(self.tree, self.callgraph, self.entries, self.chosen_classes)

    @cached_property
    def qualified_calls(self) -> list:
        """(qualified name or None, CallSite) for every call, resolved once."""
        return [(resolve(site.dotted, site.frame), site) for site in self.tree.calls]

    def calls_to(self, *names: str):
        for qualified, site in self.qualified_calls:
            if qualified in names:
                yield qualified, site

    def resolve(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        return resolve_expr(expr, frame)

    def region_of(self, frame: Frame) -> Optional[Region]:
        return self.regions.region_of(frame)

    def active_region(self, frame: Frame) -> Optional[Region]:
        return self.regions.active_region(frame)

    def torch_name(self, frame: Frame) -> Tuple[str, bool]:
        """(name to write for `torch` here, whether `import torch` must be added).
        Raises LookupError when `torch` cannot be made available (the name is taken)."""
        alias = torch_alias(frame)
        if alias is not None:
            return alias, False
        if torch_name_free(frame):
            return "torch", True
        raise LookupError("torch is shadowed")
