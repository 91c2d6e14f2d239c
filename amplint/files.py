"""Finding files, reading them as users wrote them, writing them back atomically."""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import Iterator, List, Sequence, Tuple

DEFAULT_EXCLUDES = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", "build", "dist",
    "node_modules", ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".amplint_cache", "site-packages", ".ipynb_checkpoints",
})
EXTENSIONS = (".py", ".pyi")


class ReadError(Exception):
    """A file that cannot be read as Python source; the message names the reason."""


@dataclass
class SourceFile:
    path: str
    text: str
    encoding: str  # codec to write back with ("utf-8-sig" keeps a BOM)
    raw: bytes


def discover(paths: Sequence[str], force_exclude: bool = False) -> Tuple[List[str], List[str]]:
    """(python files, errors). Directories are walked (symlinked directories are not followed,
    so a symlink loop cannot trap us); files given explicitly are taken as they are."""
    found: List[str] = []
    errors: List[str] = []
    seen = set()
    for path in paths:
        if os.path.isdir(path):
            for file in _walk(path, errors):
                if file not in seen:
                    seen.add(file)
                    found.append(file)
        elif os.path.lexists(path):
            if force_exclude and _excluded(path):
                continue
            if path not in seen:
                seen.add(path)
                found.append(path)
        else:
            errors.append(f"{path}: no such file or directory")
    return found, errors


def _excluded(path: str) -> bool:
    parts = os.path.normpath(path).split(os.sep)
    return any(part in DEFAULT_EXCLUDES for part in parts[:-1])


def _walk(root: str, errors: List[str]) -> Iterator[str]:
    def onerror(exc: OSError) -> None:
        errors.append(f"{exc.filename}: cannot list directory: {exc.strerror}")

    for directory, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames[:] = sorted(d for d in dirnames if d not in DEFAULT_EXCLUDES)
        for name in sorted(filenames):
            if name.endswith(EXTENSIONS):
                yield os.path.join(directory, name)


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise ReadError(f"cannot read: {exc.strerror or exc}") from None
    if b"\0" in raw:
        raise ReadError("not a text file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise ReadError(f"bad encoding declaration: {exc}") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        detail = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        raise ReadError(f"cannot decode as {encoding}{where}: {detail}") from None
    if encoding == "utf-8" and raw.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(path, text, encoding, raw)


def write_source(source: SourceFile, new_text: str) -> None:
    """Replace the file atomically with `new_text`, keeping encoding and mode. Raises
    ReadError (left untouched) when the file changed on disk since it was read."""
    target = os.path.realpath(source.path)
    try:
        with open(target, "rb") as handle:
            if handle.read() != source.raw:
                raise ReadError("changed on disk since it was read; not overwritten")
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError as exc:
        raise ReadError(f"cannot re-read before writing: {exc.strerror or exc}") from None
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ReadError("file is read-only; not changed")
    data = new_text.encode(source.encoding)
    directory = os.path.dirname(target) or "."
    try:
        fd, temp = tempfile.mkstemp(prefix=".amplint-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ReadError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise ReadError(f"cannot write: {exc.strerror or exc}") from None
