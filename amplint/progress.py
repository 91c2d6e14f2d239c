"""The progress line drawn on a terminal during long runs."""

from __future__ import annotations

import time
from typing import Optional, TextIO

PROGRESS_MIN_FILES = 50  # fewer files finish before a progress line would help


class Progress:
    """`amplint: 120/4000 files` redrawn in place on a terminal, at most ten times a second."""

    def __init__(self, stream: Optional[TextIO], total: int) -> None:
        self.stream = stream if stream is not None and total >= PROGRESS_MIN_FILES else None
        self.total = total
        self.last = 0.0
        self.drawn = False

    def update(self, done: int) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        self.stream.write(f"\ramplint: {done}/{self.total} files")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.stream is not None and self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
