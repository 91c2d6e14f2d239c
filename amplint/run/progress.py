"""What a long run shows while it works: a progress line redrawn in place on a terminal; where
stderr is not a terminal (CI logs, pre-commit), a line every ~10 s for a run still working,
so that it does not look hung; and, with --verbose, the name of a file taking over 10 s."""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO

PROGRESS_MIN_FILES = 50  # fewer files finish before a progress line would help
LOG_INTERVAL = 10.0  # seconds between two lines where stderr is not a terminal
SLOW_FILE_SECONDS = 10.0  # --verbose names a file still being analysed after this long

# The log thread writes while the pool forks its workers: a fork in the middle of a write would
# leave the child's stderr lock held for good. Forks wait for a write to finish.
_WRITING = threading.Lock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_WRITING.acquire, after_in_parent=_WRITING.release,
                        after_in_child=_WRITING.release)


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """On a terminal: `amplint: 120/4000 files` redrawn in place, at most ten times a second.
    Elsewhere: `amplint: 812/5409 files, 41 s` once the run has worked `interval` seconds and
    every `interval` seconds after, from a thread (a single slow file gets its lines too).
    `clock` and `thread` are for tests: a fake clock, `tick()` called by hand."""

    def __init__(
        self, stream: Optional[TextIO], total: int, clock: Callable[[], float] = time.monotonic,
        interval: float = LOG_INTERVAL, thread: bool = True,
    ) -> None:
        self.terminal = stream is not None and is_terminal(stream)
        if self.terminal and total < PROGRESS_MIN_FILES:
            stream = None
        self.stream = stream
        self.total = total
        self.done = 0
        self.stage = ""  # what runs after the files: "project pass"
        self.clock = clock
        self.interval = interval
        self.started = clock()
        self.last = 0.0 if self.terminal else self.started
        self.drawn = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        if stream is not None and not self.terminal and thread:
            self._thread = threading.Thread(target=self._run, name="amplint-progress",
                                            daemon=True)
            self._thread.start()

    def update(self, done: int) -> None:
        self.done = done
        if self.stream is None or not self.terminal:
            return
        now = self.clock()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        self.stream.write(f"\ramplint: {done}/{self.total} files")
        self.stream.flush()
        self.drawn = True

    def set_stage(self, stage: str) -> None:
        self.stage = stage

    def tick(self) -> None:
        """Where stderr is not a terminal: a line when `interval` has passed since the last."""
        if self.stream is None or self.terminal:
            return
        with self._lock, _WRITING:
            now = self.clock()
            if now - self.last < self.interval:
                return
            self.last = now
            stage = f", {self.stage}" if self.stage else ""
            self.stream.write(
                f"amplint: {self.done}/{self.total} files{stage}, {now - self.started:.0f} s\n"
            )
            self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            try:
                self.tick()
            except (OSError, ValueError):  # stderr closed: nothing more to say
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.stream is not None and self.terminal and self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@contextmanager
def naming_slow_file(
    path: str, stream: Optional[TextIO], seconds: Optional[float] = None,
    clock: Callable[[], float] = time.monotonic, timer=threading.Timer,
) -> Iterator[None]:
    """With --verbose: `amplint: PATH: still being analysed after 10 s` once the file has
    taken `seconds`, and how long it took when done. `clock`/`timer`: fakes in tests."""
    if stream is None:
        yield
        return
    seconds = SLOW_FILE_SECONDS if seconds is None else seconds
    started = clock()

    def still() -> None:
        try:
            stream.write(f"amplint: {path}: still being analysed after {seconds:.0f} s\n")
            stream.flush()
        except (OSError, ValueError):
            pass

    watch = timer(seconds, still)
    watch.daemon = True
    watch.start()
    try:
        yield
    finally:
        watch.cancel()
        took = clock() - started
        if took >= seconds:
            try:
                stream.write(f"amplint: {path}: took {took:.1f} s\n")
                stream.flush()
            except (OSError, ValueError):
                pass
