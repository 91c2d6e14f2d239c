"""`.gitignore` semantics for discovery: the ignore files of a git work tree (and
`.git/info/exclude`), matched the way git matches them, nearest file last."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

def _glob_to_regex(pattern: str) -> str:
    """One gitignore glob (already stripped of `!`, a leading `/` and a trailing `/`) as a regex
    over a `/`-separated path relative to the .gitignore's directory."""
    out: List[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                before_ok = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if before_ok and (after == n or pattern[after] == "/"):
                    if after == n:  # `foo/**`: everything inside
                        out.append(".*")
                        i = after
                    else:  # `**/` : zero or more directories
                        out.append("(?:.*/)?")
                        i = after + 1
                    continue
                out.append("[^/]*")  # `a**b` is just `*`
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = i + 1
            if end < n and pattern[end] in "!^":
                end += 1
            if end < n and pattern[end] == "]":
                end += 1
            while end < n and pattern[end] != "]":
                end += 1
            if end >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass
class IgnoreFile:
    """The rules of one ignore file, relative to `base` (a directory)."""

    base: str
    rules: List[Tuple["re.Pattern[str]", bool, bool]] = field(default_factory=list)
    # is_dir -> `_union`'s regex (None: a rule negates), made at the first match
    _unions: Dict[bool, Optional["re.Pattern[str]"]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, base: str, text: str) -> "IgnoreFile":
        result = cls(base)
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            # Trailing spaces are ignored unless escaped with a backslash.
            stripped = line.rstrip(" ")
            if stripped.endswith("\\") and len(stripped) < len(line):
                stripped += " "
            line = stripped
            if not line:
                continue
            negate = False
            if line.startswith("!"):
                negate, line = True, line[1:]
            elif line.startswith("\\!") or line.startswith("\\#"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            regex = _glob_to_regex(line)
            if not anchored:
                regex = "(?:.*/)?" + regex
            result.rules.append((re.compile(regex + r"\Z", re.S), negate, dir_only))
        return result

    def match(self, relative: str, is_dir: bool) -> Optional[bool]:
        """True ignored, False re-included (`!pattern`), None when no rule speaks."""
        union = self._unions.get(is_dir, False)
        if union is False:
            union = self._unions[is_dir] = self._union(is_dir)
        if union is not None:
            return True if union.match(relative) else None
        verdict = None
        for regex, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.match(relative):
                verdict = not negate
        return verdict

    def _union(self, is_dir: bool) -> "Optional[re.Pattern[str]]":
        """Without a `!pattern`, the last rule that matches says True, as any other would: one
        regex, the rules' alternation, says the same in one match (a walk asks per file).
        None where a rule negates (the order of the rules then matters)."""
        if any(negate for _, negate, _ in self.rules):
            return None
        kept = [regex.pattern for regex, _, dir_only in self.rules if is_dir or not dir_only]
        return re.compile("|".join(f"(?:{p})" for p in kept) or r"(?!)", re.S)


class GitIgnore:
    """`.gitignore` files (and `.git/info/exclude`) of the git work trees being walked."""

    def __init__(self) -> None:
        self._files: Dict[str, Optional[IgnoreFile]] = {}
        self._roots: Dict[str, Optional[str]] = {}
        self._chains: Dict[str, List[IgnoreFile]] = {}  # per directory: a walk asks per file

    def repo_root(self, directory: str) -> Optional[str]:
        directory = os.path.abspath(directory)
        if directory in self._roots:
            return self._roots[directory]
        if os.path.exists(os.path.join(directory, ".git")):
            root: Optional[str] = directory
        else:
            parent = os.path.dirname(directory)
            root = None if parent == directory else self.repo_root(parent)
        self._roots[directory] = root
        return root

    def _load(self, directory: str, name: str = ".gitignore") -> Optional[IgnoreFile]:
        key = os.path.join(directory, name)
        if key not in self._files:
            try:
                with open(key, encoding="utf-8", errors="replace") as handle:
                    self._files[key] = IgnoreFile.parse(directory, handle.read())
            except OSError:
                self._files[key] = None
        return self._files[key]

    def _chain(self, directory: str) -> List[IgnoreFile]:
        """Ignore files that apply inside `directory`, outermost first."""
        found = self._chains.get(directory)
        if found is None:
            found = self._chains[directory] = self._find_chain(directory)
        return found

    def _find_chain(self, directory: str) -> List[IgnoreFile]:
        """(`directory`: absolute and normalised.) Its parent's chain and its own file: a walk
        asks once per directory, and each answer is one step from the one before."""
        root = self.repo_root(directory)
        if root is None:
            return []
        if directory == root:
            chain: List[IgnoreFile] = []
            exclude = self._load(os.path.join(root, ".git", "info"), "exclude")
            if exclude is not None:
                exclude.base = root
                chain.append(exclude)
        else:
            chain = list(self._chain(os.path.dirname(directory)))
        found = self._load(directory)
        if found is not None:
            chain.append(found)
        return chain

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Is `path` itself ignored by the ignore files of its parent directories? (Callers
        walking a tree prune ignored directories, so parents need no re-check there.)"""
        path = os.path.abspath(path)
        verdict = None
        for ignore in self._chain(os.path.dirname(path)):
            base = ignore.base.rstrip(os.sep) + os.sep
            relative = path[len(base):] if path.startswith(base) else os.path.relpath(path, ignore.base)
            relative = relative.replace(os.sep, "/")
            said = ignore.match(relative, is_dir)
            if said is not None:
                verdict = said
        return bool(verdict)

    def ignored_with_parents(self, path: str, is_dir: bool) -> bool:
        """Is `path` ignored, or inside an ignored directory of its work tree?"""
        path = os.path.abspath(path)
        root = self.repo_root(os.path.dirname(path))
        if root is None:
            return False
        current = path
        is_directory = is_dir
        while current != root and current.startswith(root + os.sep):
            if self.ignored(current, is_directory):
                return True
            current = os.path.dirname(current)
            is_directory = True
        return False
