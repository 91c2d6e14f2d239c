"""A content-hash cache of lint results, so an unchanged file is not analysed again.

Key: the file's bytes, amplint's version, the rules' source (a development edit invalidates
it), the effective settings and the project entries. One small JSON file per key, written
atomically: concurrent runs may both write an entry, never a torn one.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from typing import Optional

from amplint import __version__
from amplint.analysis.diagnostics import Applicability, Diagnostic, Fix, Severity

DEFAULT_DIR = ".amplint_cache"
_INDEX = "index.json"
_MAX_INDEXED = 50_000  # per part: a warm run reads the whole index
_SMALL = 400  # bytes of JSON: a value this small, with no blob, is kept in the index
UNREADABLE = object()  # Cache.blob: a blob that cannot be read back


def _code_fingerprint(root: Optional[str] = None) -> str:
    """Changes whenever amplint's own code changes (not just its version number). The
    language server (`server/`) and the runtime monitor compute no cached result: an edit
    there keeps the cache, shared by the CLI and the server, warm."""
    if root is None:
        import amplint  # the whole package, not this module's folder (workspace/)

        root = os.path.dirname(os.path.abspath(amplint.__file__))
    digest = hashlib.sha256(__version__.encode())
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "runtime", "server"))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                stat = os.stat(path)
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


_FINGERPRINT: Optional[str] = None


def fingerprint() -> str:
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _code_fingerprint()
    return _FINGERPRINT


class Cache:
    def __init__(self, directory: str = DEFAULT_DIR, one_run: bool = False) -> None:
        """`one_run`: the cache serves one run, which keys each file several times (its result,
        its Need, the project pass): a file's status is checked the first time only. A language
        server's cache lives across edits and checks it every time."""
        self.root = directory
        self.directory = os.path.join(directory, fingerprint())
        self._ignored = False
        # One index file beside the entries, read once and written back when it changed
        # (`save_index`): "digests", absolute path -> [mtime_ns, ctime_ns, size, inode, sha256
        # hex of the content]: a run keys each file more than once (its result, its summary,
        # the project pass), reading and hashing it once, and a warm run reads no unchanged
        # file, only its status (any write changes its ctime); "small", key -> a small value
        # without a blob (most files' results: no finding, no summary), so a warm run opens
        # one file, not one per file
        self._index: Optional[dict] = None
        self._index_changed = False
        self._digested: Optional[dict] = {} if one_run else None  # path -> digest, with one_run

    def _ignore_in_git(self) -> None:
        """A `*` .gitignore inside the cache keeps it out of `git status`, as Ruff does."""
        self._ignored = True
        marker = os.path.join(self.root, ".gitignore")
        if not os.path.exists(marker):
            try:
                with open(marker, "w", encoding="utf-8") as handle:
                    handle.write("# created by amplint\n*\n")
            except OSError:
                pass

    def key(self, data: bytes, settings_key: str) -> str:
        digest = hashlib.sha256(data)
        digest.update(b"\0" + settings_key.encode())
        return digest.hexdigest()

    def content_digest(self, path: str) -> Optional[bytes]:
        """sha256 of the file's bytes (None: unreadable), read again whenever its status
        (modification and change times, size, inode) is not what it was."""
        if self._digested is not None:
            found = self._digested.get(path)
            if found is None:
                found = self._digested[path] = self._digest(path)
            return found
        return self._digest(path)

    def _digest(self, path: str) -> Optional[bytes]:
        digests = self._known()["digests"]
        where = os.path.abspath(path)
        try:
            stat = os.stat(where)
            status = [stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, stat.st_ino]
            known = digests.get(where)
            if known is not None and known[:4] == status:
                return bytes.fromhex(known[4])
            with open(where, "rb") as handle:
                digest = hashlib.sha256(handle.read()).digest()
        except (OSError, ValueError, TypeError):
            return None
        digests.pop(where, None)  # to the end: the newest are kept when the index is trimmed
        digests[where] = status + [digest.hex()]
        self._index_changed = True
        return digest

    def file_key(self, path: str, settings_key: str) -> Optional[str]:
        """The key of something computed from the file's content alone (None: unreadable)."""
        digest = self.content_digest(path)
        return None if digest is None else self.key(digest, settings_key)

    def _known(self) -> dict:
        if self._index is None:
            self._index = {"digests": {}, "small": {}}
            try:
                with open(os.path.join(self.directory, _INDEX), "r", encoding="utf-8") as handle:
                    stored = json.load(handle)
                for part in ("digests", "small"):
                    if isinstance(stored.get(part), dict):
                        self._index[part] = stored[part]
            except (OSError, ValueError, AttributeError):
                pass  # none yet, or torn by a crash: every file is read once more
        return self._index

    def save_index(self) -> None:
        """Keep the index for the next run (atomic; a concurrent run's copy may win, which
        only costs the other's files one more read)."""
        if not self._index_changed or self._index is None:
            return
        self._index_changed = False
        for part in ("digests", "small"):  # many projects share one cache: the newest stay
            if len(self._index[part]) > _MAX_INDEXED:
                self._index[part] = dict(list(self._index[part].items())[-_MAX_INDEXED:])
        self._write(os.path.join(self.directory, _INDEX),
                    json.dumps(self._index, separators=(",", ":")).encode("utf-8"))

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def get(self, key: str, with_blob: bool = False):
        """The JSON value stored under `key` (None when absent); with `with_blob`, the pair
        (value, the pickled object stored with it or None)."""
        small = self._known()["small"].get(key)
        if small is not None:
            return (small, None) if with_blob else small
        try:
            with open(self._path(key), "r", encoding="utf-8") as handle:
                value = json.load(handle)
        except (OSError, ValueError):
            return None
        if not with_blob:
            return value
        blob = self.blob(key) if value.get("_blob") else None
        if blob is UNREADABLE:  # a torn or stale blob: treat the entry as missing
            return None
        return value, blob

    def blob(self, key: str):
        """The object stored beside `key`'s value (put's `blob`); UNREADABLE where it cannot be
        read back (torn, stale, removed)."""
        try:
            with open(self._path(key)[:-5] + ".pkl", "rb") as handle:
                return pickle.load(handle)
        except Exception:
            return UNREADABLE

    def put(self, key: str, value: dict, blob=None) -> None:
        if blob is not None:
            self._write(self._path(key)[:-5] + ".pkl", pickle.dumps(blob, protocol=4))
            value = dict(value, _blob=True)
        data = json.dumps(value).encode("utf-8")
        if blob is None and len(data) <= _SMALL:
            small = self._known()["small"]
            small.pop(key, None)
            small[key] = value
            self._index_changed = True
            return
        self._write(self._path(key), data)

    def _write(self, path: str, data: bytes) -> None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not self._ignored:
                self._ignore_in_git()
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, path)
        except OSError:
            pass  # a cache that cannot be written is only slower


def diagnostic_to_dict(diag: Diagnostic) -> dict:
    data = diag.to_json()
    if isinstance(diag.through, tuple):  # the run drops chain duplicates after the cache
        data["through"] = list(diag.through)
    return data


def diagnostic_from_dict(data: dict) -> Diagnostic:
    """A finding as reports need it (no tree node, no edits: a cached finding is not fixed
    from the cache; fixing re-analyses the file)."""
    fix = None
    if data.get("fix"):
        fix = Fix(Applicability(data["fix"]["applicability"]), data["fix"]["message"], {})
    through = data.get("through")
    return Diagnostic(
        data["code"], data["message"], Severity(data["severity"]), None, fix,  # type: ignore[arg-type]
        through=(through[0], through[1]) if through else None,
        filename=data["filename"], line=data["line"], column=data["column"],
        end_line=data["end_line"], end_column=data["end_column"],
    )
