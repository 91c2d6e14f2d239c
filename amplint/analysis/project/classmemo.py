"""The class flow's second memo: values whose evaluation a cycle cut short.

The class flow memoises a value only when nothing in its evaluation met a value still being
evaluated (a cycle: `layer = checkpoint_wrapper(layer)`, `model = wrap(model)`). Any value above
such a cycle was therefore evaluated again for every question that reached it, and the
questions (each call under a region, each half cast) re-walked the same flow: 8,973
evaluations of 1,660 values on fairseq.

What such an evaluation gives depends only on its context: which of the values it evaluates
are being evaluated above it (those it is cut against), how deep it starts (the depth bound)
and how many steps the question has left (the step budget). Registrations are read as questions
of their own (registries.py), whatever is being evaluated. Kept with those, it is reused
exactly where evaluating it again would give the same: the same values active among those it
evaluated, none of them memoised since, room for its depth and its steps. A reuse replays its counts (steps, evaluations, cuts),
so every later decision (the budget, what the first memo keeps, `call_targets`' memo) is the
one a second evaluation would have made. An evaluation that met anything else that depends on
the order of the questions (the depth bound, the step budget, a file the parse budget left
unread, a nested question that restarts the budget) is not kept.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set

# the class flow's bounds on one top-level question
MAX_DEPTH = 14
STEP_BUDGET = 20000  # evaluation steps per top-level question
# values asked for in one project pass, memo hits included: the real trees benchmarked ask at most
# ~9,000 (sd-scripts; detectron2 ~650, fairseq ~4,700); peft's layers, whose cycles keep answers
# from settling, asked over 4.8M (121 s of a profile stopped at 150 s). Past the bound every
# answer is {}: fewer targets, so cross-file findings may be missed, never added (amplint.run
# reports it)
PASS_BUDGET = 150_000


class Entry:
    __slots__ = ("found", "visited", "cut", "height", "steps", "cuts", "stale")

    def __init__(self, found: dict, visited: FrozenSet[tuple], cut: FrozenSet[tuple], height: int,
                 steps: int, cuts: int) -> None:
        self.found = found
        self.visited = visited  # the values it evaluated and that were not memoised
        self.cut = cut  # the values above it that it was cut against
        self.height = height  # how much deeper than its own depth it asked
        # evaluations evaluating it again would make (steps of the budget): its own and those
        # of the values under it that were not memoised
        self.steps = steps
        self.cuts = cuts  # cuts evaluating it again would make
        self.stale = False  # one of `visited` was memoised since: evaluating it again would differ


class Frame:
    __slots__ = ("depth", "deepest", "visited", "cut", "tainted", "steps")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.deepest = depth
        self.steps = 1
        self.visited: Set[tuple] = set()
        self.cut: Set[tuple] = set()
        self.tainted = False

    def absorb(self, other: "Frame", settled: bool) -> None:
        if not settled:  # a memoised value costs nothing the next time
            self.steps += other.steps
        self.deepest = max(self.deepest, other.deepest)
        self.visited |= other.visited
        self.cut |= other.cut
        self.tainted = self.tainted or other.tainted


class ContextMemo:
    """Entries by value; `frames`: the evaluations in progress, innermost last."""

    def __init__(self) -> None:
        self.entries: Dict[tuple, List[Entry]] = {}
        self.frames: List[Frame] = []
        self.containing: Dict[tuple, List[Entry]] = {}  # value -> the entries that evaluated it
        self.reused = 0

    def taint(self) -> None:
        if self.frames:
            self.frames[-1].tainted = True

    def asked(self, depth: int) -> None:
        if self.frames and depth > self.frames[-1].deepest:
            self.frames[-1].deepest = depth

    def cut_against(self, key: tuple) -> None:
        if self.frames:
            self.frames[-1].cut.add(key)

    def settled(self, key: tuple) -> None:
        """`key` went into the first memo."""
        for entry in self.containing.pop(key, ()):
            entry.stale = True

    def find(self, key: tuple, depth: int, active: set, steps_left: int, bound: int) -> Optional[Entry]:
        for entry in self.entries.get(key, ()):
            if (not entry.stale and depth + entry.height <= bound and entry.steps <= steps_left
                    and entry.cut <= active and all(a not in entry.visited for a in active)):
                self.reused += 1
                if self.frames:
                    frame = self.frames[-1]
                    frame.steps += entry.steps
                    frame.visited |= entry.visited
                    frame.cut |= entry.cut
                    frame.deepest = max(frame.deepest, depth + entry.height)
                return entry
        return None

    def keep(self, key: tuple, frame: Frame, found: dict, cuts: int) -> None:
        frame.visited.add(key)
        if not frame.tainted:
            entry = Entry(found, frozenset(frame.visited), frozenset(frame.cut - frame.visited),
                          frame.deepest - frame.depth, frame.steps, cuts)
            self.entries.setdefault(key, []).append(entry)
            for value in entry.visited:
                self.containing.setdefault(value, []).append(entry)
