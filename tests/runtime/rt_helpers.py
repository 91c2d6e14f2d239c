"""Helpers for the runtime tests: find a test's own line by a marker comment."""

import inspect


def line_of(marker: str, obj=None) -> int:
    """The line number of the unique line in the caller's file that ends with ``# <marker>``."""
    filename = inspect.getsourcefile(obj) if obj is not None else inspect.stack()[1].filename
    hits = [i for i, text in enumerate(open(filename).read().splitlines(), 1)
            if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def where(findings, code):
    """``[(basename, line)]`` of the findings with ``code``."""
    import os

    return [(os.path.basename(f.filename), f.line) for f in findings if f.code == code]
