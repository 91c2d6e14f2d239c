"""A region reaching a function (Candidate), the order that picks the most hazardous one, and
the citation texts that say how it reaches."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Tuple

from amplint.analysis.facts.regions import Enabled

_ENABLED_RANK = {Enabled.TRUE: 0, Enabled.MAYBE: 1}
_DEVICE_RANK = {"cuda": 0, None: 1}
_DTYPE_RANK = {"float16": 0, None: 1, "bfloat16": 2}


def hazard_rank(enabled: Enabled, device: Optional[str], dtype: Optional[str]) -> Tuple[int, int, int]:
    """Lower is more hazardous: enabled before maybe, CUDA before unknown before CPU, float16
    before unknown before bfloat16."""
    return _ENABLED_RANK.get(enabled, 2), _DEVICE_RANK.get(device, 2), _DTYPE_RANK.get(dtype, 3)


@dataclass(frozen=True)
class Candidate:
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    desc: str  # the region's source: "the autocast region at train.py:12"
    cite: str  # how this function is reached: "called at train.py:14 under ..."
    site: str = ""  # the call that reaches it: "train.py:14"
    # the class of `self` when the class flow knows it: (file, class); None: any subclass
    self_cls: Optional[Tuple[str, str]] = None
    # the open world's guess this reach rests on ("open world: `model` of `train` ..."), said in
    # every finding it leads to (openworld.py)
    guess: str = ""
    # the key value of a namespace lookup this reach rests on ("when args.arch is 'resnet50', 1
    # of the 12 names of models"), said in every finding it leads to (namespace_members.py)
    select: str = ""
    # the arguments of the plain call `site` (ExternalCall.args); None: not one, or unknown. Not
    # part of the region: two candidates that differ only here are the same reach.
    args: Optional[Tuple[int, Tuple[str, ...]]] = field(default=None, compare=False)

    @property
    def key(self):
        return hazard_rank(self.enabled, self.device, self.dtype) + (
            self.desc, self.cite, self.self_cls or ("", ""), self.guess, self.select)

    def holding(self, self_cls: Optional[Tuple[str, str]]) -> "Candidate":
        """The same candidate, for a method run on an instance of `self_cls`."""
        return replace(self, self_cls=self_cls)

    def guessing(self, guess: str) -> "Candidate":
        """The same candidate, resting on an open-world guess: maybe enabled at most."""
        enabled = Enabled.MAYBE if self.enabled == Enabled.TRUE else self.enabled
        return replace(self, enabled=enabled, guess=guess)

    def selected(self, source: str) -> "Candidate":
        """The same candidate, reached through the namespace member that `source` (a class-flow
        cite) says a key value selects; itself where it says none."""
        start = source.find("(when ")
        if start < 0 or self.select:
            return self
        end = source.find(")", start)
        return replace(self, select=source[start + 1:end if end > 0 else len(source)])

    def reached(self, cite: str, site: str = "", args=None) -> "Candidate":
        """The same region, reaching further: cited by `cite`, through the call at `site` (a
        plain call with arguments `args`, ExternalCall.args)."""
        return replace(self, cite=cite, site=site, self_cls=None, args=args)

    @property
    def said(self) -> str:
        """The cite with the guess it rests on."""
        said = f"{self.cite}; {self.guess}" if self.guess else self.cite
        return f"{said}; only {self.select}" if self.select and self.select not in said else said


def cite_more(candidate: Candidate, more: int) -> str:
    """"called at train.py:14 and 2 more under ..." when other calls reach the function too."""
    head = f"called at {candidate.site} "
    if more < 1 or not candidate.site or not candidate.cite.startswith(head):
        return candidate.said
    return f"called at {candidate.site} and {more} more " + candidate.said[len(head):]


def chain(text: str, source: Optional[str], held: str) -> str:
    """`model <- build_model(cfg) at train.py:7 -> Net in models/net.py`."""
    return f"{text} <- {source} -> {held}" if source else f"{text} -> {held}"
