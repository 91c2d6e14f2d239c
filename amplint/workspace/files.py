"""Finding files, reading them as users wrote them, writing them back atomically.

Discovery walks directories (never following symlinked directories, so a loop cannot trap it),
skips the default excludes (`.git`, virtual environments, `build`, `__pycache__`, ...), the
project's `exclude`/`extend-exclude` globs and, inside a git work tree, whatever `.gitignore`
files and `.git/info/exclude` ignore (gitignore.py). Files named explicitly are taken as they are, unless
`force_exclude` (what pre-commit passes) asks for the excludes to apply to them too.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence, Tuple

from amplint.workspace.gitignore import GitIgnore, IgnoreFile  # noqa: F401 (re-exported)

DEFAULT_EXCLUDES = frozenset({
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".env", "env", "__pycache__", "build",
    "dist", "node_modules", ".tox", ".nox", ".eggs", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".amplint_cache", "site-packages", ".ipynb_checkpoints", "__pypackages__",
    ".direnv", "_build", "buck-out", ".pants.d", ".pytype",
})
EXTENSIONS = (".py", ".pyi", ".ipynb")


class ReadError(Exception):
    """A file that cannot be read as Python source; the message names the reason."""


@dataclass
class SourceFile:
    path: str
    text: str
    encoding: str  # codec to write back with ("utf-8-sig" keeps a BOM)
    raw: bytes


# -- excludes ----------------------------------------------------------------------------------

@dataclass
class Excludes:
    """The default excludes plus the project's `exclude`/`extend-exclude` globs. A glob without
    a `/` matches a file or directory name at any depth; one with a `/` matches the path
    relative to `root` (the directory of the pyproject.toml, else the working directory)."""

    patterns: Sequence[str] = ()
    root: str = ""
    defaults: bool = True
    respect_gitignore: bool = True

    def __post_init__(self) -> None:
        self.root = os.path.abspath(self.root or os.getcwd())
        self.names = [p.rstrip("/") for p in self.patterns if "/" not in p.rstrip("/")]
        self.paths = [p.strip("/") for p in self.patterns if "/" in p.rstrip("/")]
        if self.defaults:
            self.names = sorted(DEFAULT_EXCLUDES) + self.names
        # the name globs as one regex (asked for every file and folder of a walk)
        joined = "|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in self.names)
        self._name_pattern = re.compile(joined) if joined else None

    def _relative(self, path: str) -> str:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, self.root)
        if relative.startswith(os.pardir):
            return absolute.replace(os.sep, "/")
        return relative.replace(os.sep, "/")

    def name_excluded(self, name: str) -> bool:
        return self._name_pattern is not None and self._name_pattern.match(name) is not None

    def path_excluded(self, path: str) -> bool:
        """The entry itself (by name or by relative path), not its parents."""
        if self.name_excluded(os.path.basename(os.path.normpath(path))):
            return True
        if self.paths:
            relative = self._relative(path)
            return any(fnmatch.fnmatchcase(relative, pattern) for pattern in self.paths)
        return False

    def excluded_with_parents(self, path: str) -> bool:
        """For paths given explicitly: the file or any directory on the way to it, counted
        from the project root (a path outside the project is judged by its own name)."""
        relative = self._relative(path)
        if relative.startswith("/"):  # outside the project: judge the entry by its own name
            absolute = relative
            return self.name_excluded(os.path.basename(absolute)) or any(
                fnmatch.fnmatchcase(absolute, pattern) for pattern in self.paths)
        parts = [p for p in relative.split("/") if p]
        for index, part in enumerate(parts):
            if self.name_excluded(part):
                return True
            prefix = "/".join(parts[: index + 1])
            if any(fnmatch.fnmatchcase(prefix, pattern) for pattern in self.paths):
                return True
        return False


def discover(
    paths: Sequence[str], force_exclude: bool = False, excludes: Optional[Excludes] = None,
) -> Tuple[List[str], List[str]]:
    """(files to lint, errors). Directories are walked (symlinked directories are not followed,
    so a symlink loop cannot trap us); files given explicitly are taken as they are, unless
    `force_exclude` applies the excludes and .gitignore to them as well."""
    excludes = excludes if excludes is not None else Excludes()
    gitignore = GitIgnore() if excludes.respect_gitignore else None
    found: List[str] = []
    errors: List[str] = []
    seen = set()
    for path in paths:
        if os.path.isdir(path):
            if force_exclude and _explicit_excluded(path, True, excludes, gitignore):
                continue
            for file in _walk(path, errors, excludes, gitignore):
                if file not in seen:
                    seen.add(file)
                    found.append(file)
        elif os.path.lexists(path):
            if force_exclude and _explicit_excluded(path, False, excludes, gitignore):
                continue
            if path not in seen:
                seen.add(path)
                found.append(path)
        else:
            errors.append(f"{path}: no such file or directory")
    return found, errors


def _explicit_excluded(path: str, is_dir: bool, excludes: Excludes, gitignore) -> bool:
    if excludes.excluded_with_parents(path):
        return True
    return gitignore is not None and gitignore.ignored_with_parents(path, is_dir)


def _walk(root: str, errors: List[str], excludes: Excludes, gitignore) -> Iterator[str]:
    def onerror(exc: OSError) -> None:
        errors.append(f"{exc.filename}: cannot list directory: {exc.strerror}")

    for directory, dirnames, filenames in os.walk(root, onerror=onerror):
        kept = []
        for name in sorted(dirnames):
            full = os.path.join(directory, name)
            if excludes.path_excluded(full):
                continue
            if gitignore is not None and gitignore.ignored(full, True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(EXTENSIONS):
                continue
            full = os.path.join(directory, name)
            if full.startswith("." + os.sep):  # `amplint .` reports `a.py`, not `./a.py`
                full = full[2:]
            if excludes.path_excluded(full):
                continue
            if gitignore is not None and gitignore.ignored(full, False):
                continue
            yield full


# -- reading and writing -----------------------------------------------------------------------

def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ReadError(f"cannot read: {exc.strerror or exc}") from None


def _not_utf8(raw: bytes) -> ReadError:
    """The error for bytes that are not UTF-8, naming the first bad byte and its offset in
    the file (a BOM counted)."""
    skip = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        raw[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + skip
        return ReadError(f"not valid UTF-8 (byte 0x{raw[offset]:02x} at offset {offset})")
    return ReadError("not valid UTF-8")


def read_source(path: str) -> SourceFile:
    raw = read_bytes(path)
    if b"\0" in raw:
        raise ReadError("not a text file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if not _has_cookie(raw):
            # No coding cookie: the file is UTF-8 by definition, and it is not.
            raise _not_utf8(raw) from None
        raise ReadError(f"bad encoding declaration: {exc}") from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if encoding in ("utf-8", "utf-8-sig"):
            raise _not_utf8(raw) from None
        raise ReadError(f"cannot decode as {encoding} at byte {exc.start}: {exc.reason}") from None
    except LookupError as exc:
        raise ReadError(f"cannot decode as {encoding}: {exc}") from None
    if encoding == "utf-8" and raw.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(path, text, encoding, raw)


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", re.M)


def _has_cookie(raw: bytes) -> bool:
    first_two = b"\n".join(raw.split(b"\n", 2)[:2])
    return _COOKIE.search(first_two) is not None


def read_text_utf8(path: str) -> SourceFile:
    """A UTF-8 text file that is not Python (a notebook's JSON)."""
    raw = read_bytes(path)
    encoding = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise _not_utf8(raw) from None
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
