"""Files are independent: analyse them in a process pool when there are enough of them."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterator, List, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_FILES_PER_WORKER = 8


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def imap(func: Callable[[T], R], items: Sequence[T], jobs: Optional[int] = None) -> Iterator[R]:
    """`func` over `items`, results in order as they are ready; across processes when there
    are enough items to pay for starting them."""
    jobs = default_jobs() if not jobs or jobs < 1 else jobs
    jobs = min(jobs, max(1, len(items) // MIN_FILES_PER_WORKER))
    if jobs <= 1:
        for item in items:
            yield func(item)
        return
    chunk = max(1, min(16, len(items) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(func, items, chunksize=chunk)


def pmap(func: Callable[[T], R], items: Sequence[T], jobs: Optional[int] = None) -> List[R]:
    """`[func(i) for i in items]`, in order, across processes when it pays off."""
    jobs = default_jobs() if not jobs or jobs < 1 else jobs
    jobs = min(jobs, max(1, len(items) // MIN_FILES_PER_WORKER))
    if jobs <= 1:
        return [func(item) for item in items]
    chunk = max(1, min(64, len(items) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(func, items, chunksize=chunk))


def run_isolated(func: Callable[[T], R], item: T) -> R:
    """`func(item)` in a process of its own that ends afterwards, so that the memory it took
    (a LibCST tree of a generated multi-megabyte file can take a gigabyte) goes back to the
    system instead of staying with a pool worker for the rest of the run."""
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - no fork on this platform
        return func(item)
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(func, item).result()
