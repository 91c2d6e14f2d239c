"""DataParallel wrappers the class flow finds around a region's model (AMP153 across files): a
call `model(x)` under a region, where `model` holds, on some path, `nn.DataParallel(m)` of a
project module class whose `forward` opens no autocast (pytorch/examples' imagenet: the builder
in another file returns `torch.nn.DataParallel(model).cuda()` under an `if`; the trainer is
handed the result as a parameter). The calling file gets an `EntryWrappedCall` naming the call
by its function and receiver; the rule decides whether the region is bfloat16.

Cost: the receiver's values are the class flow's (memoised, asked already to find the targets);
the defining file is parsed only for a class some wrapper holds."""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

from amplint.analysis.facts.module_autocast import EntryWrappedCall
from amplint.analysis.project.module_entries import plain_forward
from amplint.analysis.project.nograd_entries import receiver_name


def note_wrapped_call(project, path: str, key: str, receiver, attr: str, instance) -> None:
    """Record an EntryWrappedCall for `path` when the receiver of the call `receiver(...)` in
    function `key` holds a DataParallel of `instance` (file, class)."""
    if attr or instance is None:
        return
    name = receiver_name(receiver)
    if name is None:
        return
    asked: Dict[tuple, bool] = project.__dict__.setdefault("_wrap_asked", {})
    question = (path, key, receiver, tuple(instance))
    if question in asked:  # propagation meets the same call once per better region
        return
    asked[question] = True
    hold = project.flow.values(path, key, receiver).get(("inst",) + tuple(instance))
    if hold is None or hold.wrap is None:
        return
    memo: Dict[Tuple[str, str], Optional[int]] = project.__dict__.setdefault("_plain_forwards", {})
    if instance not in memo:
        memo[instance] = plain_forward(project, instance[0], instance[1])
    line = memo[instance]
    if line is None:
        return
    cpath, cls = instance
    found: Dict[str, Set[EntryWrappedCall]] = project.__dict__.setdefault("wrapped_calls", {})
    found.setdefault(path, set()).add(EntryWrappedCall(
        key or "", name, cls, f"{project.display(cpath)}:{line}", hold.wrap, hold.cite))
    project.__dict__.setdefault("wrapped_deps", {}).setdefault(path, set()).add(cpath)
