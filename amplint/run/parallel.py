"""Files are independent: analyse them in a process pool when there are enough of them."""

from __future__ import annotations

import contextlib
import gc
import os
import queue
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Callable, Dict, Iterator, List, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_FILES_PER_WORKER = 8


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def cycles_collected_after():
    """No cyclic garbage collection while one file is analysed; the collector runs again after
    it (what the file's analysis left in cycles is then collected as usual). A LibCST tree is
    many young objects without cycles, freed by reference counting: the collector's passes over
    them during a parse were a tenth of its cost, for nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextlib.contextmanager
def survivors_frozen():
    """While the project pass runs: what exists when it starts (the first pass's results, the
    run's modules) and whatever survives each of its collections is frozen, so that no later
    collection of the pass walks it again; unfrozen after it (the caller collects the pass's
    cycles then). Nearly all the pass makes survives (its summaries, indexes and memos: on
    fairseq and detectron2 ~90 % of what a young collection walks), and each survivor was
    walked again by the middle and the full collections: frozen at once, it is walked once
    (fairseq: 2.55M objects walked in a -j 1 run, 1.78M so; the pass's peak memory the same).
    Only this process: a worker forked meanwhile (a huge file's) collects as usual."""
    owner = os.getpid()

    def freeze_survivors(phase: str, info: dict) -> None:
        if phase == "stop" and os.getpid() == owner:
            gc.freeze()

    gc.freeze()
    gc.callbacks.append(freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(freeze_survivors)
        gc.unfreeze()


HUGE_BYTES = 1 << 20  # a file this large may take a gigabyte as a LibCST tree


def is_huge(path: str) -> bool:
    try:
        return os.path.getsize(path) >= HUGE_BYTES
    except OSError:
        return False


def imap(
    func: Callable[[T], R], items: Sequence[T], jobs: Optional[int] = None,
    isolate: Optional[Callable[[T], bool]] = None,
) -> Iterator[R]:
    """`func` over `items`, results in order as they are ready; across processes when there
    are enough items to pay for starting them. Items `isolate` picks (huge files) run each in
    a process of their own that ends after it, so the memory their tree took goes back to
    the system (a long-lived worker, or the main process, would keep its peak)."""
    if isolate is not None:
        heavy = [index for index, item in enumerate(items) if isolate(item)]
        if heavy:
            yield from _with_isolated(func, items, heavy, lambda light: imap(func, light, jobs))
            return
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


class Workers:
    """A process pool kept for a series of batches, however small (the project pass asks for
    summaries in many waves, some of one file): started on the first batch, so that the main
    process parses nothing. With one job, everything runs here."""

    def __init__(self, jobs: Optional[int] = None) -> None:
        self.jobs = default_jobs() if not jobs or jobs < 1 else jobs
        self._pool: Optional[ProcessPoolExecutor] = None
        self._ahead: List["Ahead"] = []

    def imap(self, func: Callable[[T], R], items: Sequence[T],
             isolate: Optional[Callable[[T], bool]] = None) -> Iterator[R]:
        if isolate is not None:
            heavy = [index for index, item in enumerate(items) if isolate(item)]
            if heavy:
                yield from _with_isolated(func, items, heavy, lambda light: self.imap(func, light))
                return
        if self.jobs <= 1 or not items:
            for item in items:
                yield func(item)
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        chunk = max(1, min(16, len(items) // (self.jobs * 8)))
        yield from self._pool.map(func, items, chunksize=chunk)

    def start(self, func: Callable[[T], R], items: Sequence[T], ahead: int) -> "Ahead":
        """`func` over `items` in this pool while the caller goes on with other work (see
        Ahead); the pool's processes are forked here, in the calling thread."""
        if self.jobs > 1 and items and self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        chunk = max(1, min(16, len(items) // (self.jobs * 8)))  # as imap's: one message a file
        started = Ahead(self._pool if self.jobs > 1 else None, func, items, ahead, chunk)
        self._ahead.append(started)
        return started

    def close(self) -> None:
        for started in self._ahead:
            started.stop()
        self._ahead = []
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Ahead:
    """`func` over `items` in a pool while the caller does other work: the first is submitted
    here (the pool forks its processes in the caller's thread), the others by a thread of
    their own, at most `ahead` chunks of them queued or running at a time, so that a batch the caller
    asks of the same pool meanwhile (Workers.imap) waits behind those few only. `results()`
    gives them in order; without a pool they are made there, in this process, one by one."""

    def __init__(self, pool: Optional[ProcessPoolExecutor], func: Callable[[T], R],
                 items: Sequence[T], ahead: int, chunk: int = 1) -> None:
        self._func, self._items = func, list(items)
        # submitted `chunk` items at a time: each submission costs the main process (pickling,
        # a future, a wake-up of this thread) what a map's chunk costs
        self._chunks = [self._items[i:i + chunk] for i in range(0, len(self._items), chunk)]
        self._futures: "queue.Queue[Future]" = queue.Queue()
        self._stopped = threading.Event()
        self._ahead = max(1, ahead)
        self._room = threading.Semaphore(self._ahead)
        self._thread: Optional[threading.Thread] = None
        self.pooled = pool is not None and bool(self._items)
        if self.pooled:
            self._submit(pool, self._chunks[0])
            self._thread = threading.Thread(target=self._feed, args=(pool,), daemon=True,
                                            name="amplint-ahead")
            self._thread.start()

    def _submit(self, pool: ProcessPoolExecutor, chunk) -> bool:
        self._room.acquire()
        if self._stopped.is_set():
            return False
        try:
            future = pool.submit(_each, self._func, chunk)
        except Exception as exc:  # a broken or closed pool: results() raises it
            future = Future()
            future.set_exception(exc)
            self._futures.put(future)
            return False
        future.add_done_callback(lambda _: self._room.release())
        self._futures.put(future)
        return True

    def _feed(self, pool: ProcessPoolExecutor) -> None:
        for chunk in self._chunks[1:]:
            if not self._submit(pool, chunk):
                return

    def results(self) -> Iterator:
        if not self.pooled:
            for item in self._items:
                yield self._func(item)
            return
        for _ in self._chunks:
            yield from self._futures.get().result()

    def widen(self, ahead: int) -> None:
        """At most `ahead` chunks in flight from now on (the caller's other work is done: the
        pool's every worker may take them)."""
        for _ in range(ahead - self._ahead):
            self._room.release()
        self._ahead = max(self._ahead, ahead)

    def stop(self) -> None:
        """Submit no more; what is queued and not yet running is cancelled."""
        self._stopped.set()
        self._room.release()
        if self._thread is not None:
            self._thread.join()
        while not self._futures.empty():
            self._futures.get_nowait().cancel()


def _each(func, chunk) -> list:
    return [func(item) for item in chunk]


def _with_isolated(func, items, heavy, run_light) -> Iterator:
    import multiprocessing

    done = {}
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with context.Pool(1, maxtasksperchild=1) as pool:
        for index, result in zip(heavy, pool.imap(func, [items[i] for i in heavy], chunksize=1)):
            done[index] = result
    light = [index for index in range(len(items)) if index not in done]
    results = iter(run_light([items[i] for i in light]))
    for index in range(len(items)):
        yield done[index] if index in done else next(results)


def cached_imap(workers: Workers, func: Callable[[str], R], paths: Sequence[str], cache, kind: str,
                described: Callable[[R], dict]) -> Dict[str, R]:
    """path -> func(path), from `cache` (amplint.workspace.cache.Cache, or None) by the file's
    content and (kind, path), else from `workers` (huge files each in a process of their
    own); `described(result)`: the small record stored beside the result."""
    found: Dict[str, R] = {}
    keys = {path: cache.file_key(path, repr((kind, path))) if cache is not None else None
            for path in paths}
    pending: List[str] = []
    for path in paths:
        hit = cache.get(keys[path], with_blob=True) if keys[path] else None
        if hit is not None:
            found[path] = hit[1]
        else:
            pending.append(path)
    for path, made in zip(pending, workers.imap(func, pending, isolate=is_huge)):
        found[path] = made
        if keys[path]:
            cache.put(keys[path], described(made), blob=made)
    return found
