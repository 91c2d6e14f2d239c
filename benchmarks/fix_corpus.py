"""Whole-corpus fix run: does `amplint --fix --unsafe-fixes` ever break real code?

    python benchmarks/fix_corpus.py [--torch] [--inject] [--jobs 2] [--keep DIR] [--json FILE]
                                    [SOURCE ...]

SOURCE: folders of Python files (default: /tmp/corpus/src, the unzipped transformers, timm and
lightning wheels); `--torch` adds the `.py` files of the installed torch package (found without
importing it). Only `.py` files are copied, into a temporary folder: the originals are never
touched. amplint then runs through its command line, as users run it:

    python -m amplint --fix --unsafe-fixes --select ALL --output-format json FILES...

(every rule, the off-by-default ones included), and every file is checked:

- crashes: the CLI exited 2 or printed a traceback, or a rule crashed on a file (`internal
  error in AMPxxx`), or a fix was rejected by the engine as invalid Python (`fix skipped`);
- broken: the file compiled before and does not compile after;
- non-idempotent: a second `amplint --fix --unsafe-fixes --select ALL` run on the changed files
  changes them again (fixable-left, not a gate: findings with a fix that --fix left in place);
- mismatch: what the CLI wrote differs from what `amplint.analysis.engine.lint_source(..., fix=True)`
  computes from the original text (so the writer lost or altered something: encoding, BOM,
  newlines), or the BOM / newline style of the file was not kept;
- outside: a changed line lies outside the accepted region (below);
- ast-outside: a statement outside the accepted region differs in its AST.

The accepted region of a file is computed with the engine on the *original* text, from the
findings that carry a fix (with --unsafe-fixes every fix is applied). It is the union of, per
such finding, (a) its own line range and (b) the line range of every node its fix replaces,
whitespace included (fixes are node replacements: AMP104 replaces the enclosing `with`
statement to move statements out of it, AMP102 replaces the statement it wraps in a new `with`,
AMP130 replaces the imports it rewrites; a node's leading comments and blank lines belong to
it), and (c) the header lines of every `with` statement with an autocast item that encloses
the finding: a backward inside two nested autocast regions is moved out of the inner one, then,
in the next fix round, out of the outer one (whose multi-item header may be split for that). Lines inserted by the diff are accepted when they touch an accepted line (a statement
replaced by several, e.g. `scaler.update()` added after `scaler.step(...)`), or when they are
just the `import torch` (and blank lines) the engine adds for a fix that declares it needs
torch. A fix made in a later round of the engine's fix loop, for a finding that only appears
after an earlier fix, is accepted if its changed lines lie in the region of the finding it
arose from; otherwise the file is reported as `cascade-outside` (not a gate, listed for review):
a cascade is a fix round that fixed more findings of a code than the first run reported.

The line check needs no diff (a greedy diff pairs repeated lines, a second `loss.backward()`
or a repeated block, with the wrong copy): the original is cut into runs of lines outside the
region, which the fixed file must contain unchanged, in order, with only region replacements
between them. The AST check sets aside the common head and tail of each statement list, then
compares an equal-length middle statement by statement, else diffs it.

The AST check compares statement lists at every depth (ast.dump without positions): a
compound statement whose header (everything but its bodies) is unchanged is compared body by
body; any other statement that differs must overlap the accepted region, and a statement
inserted where the original had none must be `import torch` or sit next to a statement that
overlaps the accepted region.

Exit status 0 when crashes, broken, non-idempotent, mismatch, outside and ast-outside are
all zero, else 1. A JSON report (`--json`) lists every problem with its file.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

DEFAULT_SOURCES = ("/tmp/corpus/src",)
CHUNK = 400  # files per CLI invocation (keeps command lines short)


# -- the corpus ----------------------------------------------------------------------------------

def torch_source_dir() -> str:
    """The installed torch package's folder, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed")
    return list(spec.submodule_search_locations)[0]


def collect(sources: Sequence[str]) -> List[Tuple[str, str]]:
    """(original path, relative destination) of every `.py` file, sorted, deterministic.
    Each source lands under its own folder name (`torch/...`, `src/...`)."""
    out: List[Tuple[str, str]] = []
    for index, source in enumerate(sources):
        source = os.path.abspath(source)
        label = f"{index}_{os.path.basename(source.rstrip(os.sep)) or 'root'}"
        for directory, dirnames, filenames in os.walk(source):  # symlinks not followed
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".py"):
                    full = os.path.join(directory, name)
                    if os.path.isfile(full) and not os.path.islink(full):
                        out.append((full, os.path.join(label, os.path.relpath(full, source))))
    return out


# -- hazard injection ---------------------------------------------------------------------------
# Library code has few AMP hazards, so few fixes happen on it. `--inject` plants hazards into the
# copies, in real surroundings: at the end of every `with ...autocast(...)` body, and at the
# start of every fifth function (chosen by a hash of the path and line: deterministic), a block
# the fixes rewrite (AMP102 binary_cross_entropy under autocast, AMP104 backward inside it).
# The injected file is then the "original" that every check compares against.

INJECT_IN_WITH = (
    "_amplint_loss = torch.nn.functional.binary_cross_entropy(_amplint_p, _amplint_y)",
    "_amplint_loss.backward()",
)
INJECT_IN_DEF = (
    "with torch.autocast('cuda'):",
    "    _amplint_loss = torch.nn.functional.binary_cross_entropy(_amplint_p, _amplint_y)",
    "    _amplint_loss.backward()",
)


def _binds_torch(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Import) and any(a.name == "torch" and a.asname is None
                                             for a in node.names)
        for node in tree.body
    )


def inject(relative: str, text: str) -> Tuple[str, int]:
    """(text with hazards planted, number of sites); the text unchanged when not possible."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, 0
    if not _binds_torch(tree):
        return text, 0
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    inserts: Dict[int, List[str]] = {}  # after line n (1-based): lines

    def indent_of(stmt: ast.stmt) -> Optional[str]:
        line = lines[stmt.lineno - 1]
        head = line[: len(line) - len(line.lstrip(" \t"))]
        return head if len(head) == stmt.col_offset else None

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
            continue
        if body[0].lineno == node.lineno:  # `with x: y` on one line
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
            isinstance(item.context_expr, ast.Call)
            and ast.unparse(item.context_expr.func).endswith("autocast")
            for item in node.items
        ):
            head = indent_of(body[0])
            last = body[-1]
            if head is not None and not isinstance(last, (ast.Return, ast.Raise)):
                inserts.setdefault(last.end_lineno, []).extend(
                    head + line for line in INJECT_IN_WITH)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if hash_of(f"{relative}:{node.lineno}") % 5:
                continue
            first = body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                if len(body) < 2:
                    continue
                first = body[1]
            head = indent_of(first)
            start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
            if head is not None and "\t" not in head:
                inserts.setdefault(start - 1, []).extend(
                    head + line for line in INJECT_IN_DEF)
    if not inserts:
        return text, 0
    out = []
    for number, line in enumerate(lines, start=1):
        if number == 1 and 0 in inserts:
            out.extend(l + newline for l in inserts[0])
        out.append(line)
        if number in inserts:
            if not line.endswith(("\n", "\r")):
                out.append(newline)
            out.extend(l + newline for l in inserts[number])
    new = "".join(out)
    if not compiles(new):
        return text, 0
    return new, sum(1 for _ in inserts)


def hash_of(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def copy_corpus(files: Sequence[Tuple[str, str]], dest: str) -> List[str]:
    copied = []
    for original, relative in files:
        target = os.path.join(dest, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(original, target)
        copied.append(relative)
    return copied


# -- running the CLI -----------------------------------------------------------------------------

@dataclass
class CliRun:
    returncodes: List[int] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # stderr lines
    findings_left: List[dict] = field(default_factory=list)
    seconds: float = 0.0


def run_cli(root: str, relative: Sequence[str], jobs: int = 1) -> CliRun:
    """`python -m amplint --fix --unsafe-fixes --select ALL` over the files (in chunks, `jobs`
    processes at a time), from `root` with an empty configuration."""
    config = os.path.join(root, "pyproject.toml")
    if not os.path.exists(config):
        with open(config, "w", encoding="utf-8") as handle:
            handle.write("[tool.amplint]\nrespect-gitignore = false\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONWARNINGS", None)
    command = [sys.executable, "-m", "amplint", "--fix", "--unsafe-fixes", "--select", "ALL",
               "--output-format", "json", "--config", config]
    chunks = [list(relative[i:i + CHUNK]) for i in range(0, len(relative), CHUNK)]
    result = CliRun()
    start = time.monotonic()
    running: List[subprocess.Popen] = []

    def reap(proc: subprocess.Popen) -> None:
        out, err = proc.communicate()
        result.returncodes.append(proc.returncode)
        result.errors.extend(line for line in err.splitlines() if line.strip())
        try:
            result.findings_left.extend(json.loads(out) if out.strip() else [])
        except json.JSONDecodeError:
            result.errors.append(f"(unparsable CLI output) {out[:200]!r}")

    for chunk in chunks:
        while len(running) >= max(1, jobs):
            reap(running.pop(0))
        running.append(subprocess.Popen(
            command + chunk, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", errors="replace",
        ))
    for proc in running:
        reap(proc)
    result.seconds = time.monotonic() - start
    return result


# -- the engine's view of the original text ------------------------------------------------------

@dataclass
class Before:
    """What the engine says about one original file."""

    findings: int = 0
    fixable: int = 0
    codes: Counter = field(default_factory=Counter)
    fixable_codes: Counter = field(default_factory=Counter)
    region: Set[int] = field(default_factory=set)  # accepted lines (1-based)
    imports_torch: bool = False
    crashes: List[str] = field(default_factory=list)
    parsed: bool = False


def _settings():
    from amplint.analysis.engine import Settings
    from amplint.analysis.rules import all_rules

    return Settings(frozenset(all_rules()), unsafe_fixes=True)


def engine_before(path: str, text: str, settings=None) -> Before:
    """Findings on the original text and the accepted region of their fixes. A rule that
    crashes is recorded and left out, so the others still give their regions."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, WhitespaceInclusivePositionProvider

    from amplint.analysis import engine

    settings = settings or _settings()
    out = Before()
    rules = settings.rules()
    if not engine.could_match(text, rules):
        return out
    try:
        module = engine.parse(text)
    except Exception:
        return out
    out.parsed = True
    while True:
        try:
            diags = engine.analyze(path, text, module, rules)
            break
        except engine.RuleCrash as exc:
            out.crashes.append(f"{path}: {exc}")
            rules = [rule for rule in rules if rule.code != exc.code]
        except RecursionError:
            out.crashes.append(f"{path}: RecursionError in analysis")
            return out
    out.findings = len(diags)
    fixable = [d for d in diags if d.fix is not None and settings.allows(d.fix)]
    out.fixable = len(fixable)
    out.codes.update(d.code for d in diags)
    out.fixable_codes.update(d.code for d in fixable)
    if not fixable:
        return out
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(
        WhitespaceInclusivePositionProvider
    )
    headers = _autocast_with_headers(text)
    for diag in fixable:
        out.region.update(range(diag.line, diag.end_line + 1))
        for first, last, body_end in headers:
            if first <= diag.line <= body_end:
                out.region.update(range(first, last + 1))
        for node in diag.fix.edits:
            span = positions[node]
            out.region.update(range(span.start.line, span.end.line + 1))
        if "torch" in diag.fix.imports:
            out.imports_torch = True
    return out


def _autocast_with_headers(text: str) -> List[Tuple[int, int, int]]:
    """(first header line, last header line, last body line) of each `with` that has an
    `...autocast(...)` item."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
            "autocast" in ast.unparse(item.context_expr) for item in node.items
        ):
            last = max(node.lineno, node.body[0].lineno - 1)
            found.append((node.lineno, last, node.end_lineno or node.lineno))
    return found


# -- the checks ----------------------------------------------------------------------------------

def compiles(source: str, path: str = "<file>") -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
    return True


def _is_import_torch_line(line: str) -> bool:
    return line.strip() in ("import torch", "")


def changed_lines_outside(before: str, after: str, region: Set[int],
                          imports_torch: bool) -> List[str]:
    """Changed lines outside `region` (1-based lines of `before`); see the module doc.

    Alignment-free: `before` is cut into runs of lines outside the region (kept) and inside
    it (replaceable); `after` must be the kept runs, unchanged and in order, with anything
    in place of each region run (so lines inserted next to a region line are accepted), the
    first run at the start and the last at the end. With `imports_torch`, one added
    `import torch` line (and a blank line beside it) may appear anywhere."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    problem = _kept_runs_problem(old, new, region)
    if problem is None or not imports_torch:
        return [] if problem is None else [problem]
    for index, line in enumerate(new):
        if line.strip() != "import torch":
            continue
        for extra in ((), (index + 1,), (index - 1,)):
            drop = {index, *extra}
            if any(not 0 <= i < len(new) or (i != index and new[i].strip()) for i in drop):
                continue
            if _kept_runs_problem([l for l in old], [l for i, l in enumerate(new)
                                                     if i not in drop], region) is None:
                return []
    return [problem]


def _kept_runs_problem(old: List[str], new: List[str], region: Set[int]) -> Optional[str]:
    runs: List[Tuple[bool, int, int]] = []  # (kept, first line, last line), 1-based
    for number in range(1, len(old) + 1):
        kept = number not in region
        if runs and runs[-1][0] == kept:
            runs[-1] = (kept, runs[-1][1], number)
        else:
            runs.append((kept, number, number))
    if not runs:
        return None if not new else "lines added to an empty file"
    position = 0
    for index, (kept, first, last) in enumerate(runs):
        if not kept:
            continue
        block = old[first - 1:last]
        size = len(block)
        is_first, is_last = index == 0, index == len(runs) - 1
        if is_first and is_last:
            found = 0 if new == block else -1
        elif is_first:
            found = 0 if new[:size] == block else -1
        elif is_last:
            found = len(new) - size if len(new) - size >= position and new[len(new) - size:] == block else -1
        else:
            found = -1
            for start in range(position, len(new) - size + 1):
                if new[start] == block[0] and new[start:start + size] == block:
                    found = start
                    break
        if found < 0:
            return (f"lines {first}-{last} (outside the fixes' region) are not in the fixed "
                    f"file unchanged and in order: {old[first - 1].rstrip()!r}")
        position = found + size
    return None


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _dump(node: ast.AST) -> str:
    return ast.dump(node)


def _header(node: ast.AST) -> str:
    """The node without its statement bodies."""
    fields = {}
    for name, value in ast.iter_fields(node):
        fields[name] = [] if name in _BLOCKS else value
    clone = type(node)(**fields)
    return ast.dump(clone)


def _lines(node: ast.AST) -> Tuple[int, int]:
    if hasattr(node, "lineno"):
        start = node.lineno
        for dec in getattr(node, "decorator_list", ()):
            start = min(start, dec.lineno)
        return start, node.end_lineno or node.lineno
    inner = [_lines(child) for name in _BLOCKS for child in getattr(node, name, ())]
    if isinstance(node, ast.match_case):
        inner.append(_lines(node.pattern))
    return (min(s for s, _ in inner), max(e for _, e in inner)) if inner else (0, 0)


def _overlaps(node: ast.AST, region: Set[int]) -> bool:
    start, end = _lines(node)
    return any(n in region for n in range(start, end + 1))


def _is_import_torch(node: ast.AST) -> bool:
    return isinstance(node, ast.Import) and [(a.name, a.asname) for a in node.names] == [
        ("torch", None)
    ]


def ast_outside(before: ast.AST, after: ast.AST, region: Set[int]) -> List[str]:
    """Statements that differ although they lie outside `region`; see the module doc."""
    problems: List[str] = []

    def compare(old: List[ast.AST], new: List[ast.AST]) -> None:
        od, nd = [_dump(s) for s in old], [_dump(s) for s in new]
        # Common head and tail first: a greedy matcher could pair a repeated statement
        # (`loss.backward()` twice in a body) with the wrong copy. An equal-length middle is
        # then compared statement by statement.
        head = 0
        while head < min(len(od), len(nd)) and od[head] == nd[head]:
            head += 1
        tail = 0
        while (tail < min(len(od), len(nd)) - head
               and od[len(od) - 1 - tail] == nd[len(nd) - 1 - tail]):
            tail += 1
        old_mid, new_mid = old[head:len(old) - tail], new[head:len(new) - tail]
        if len(old_mid) == len(new_mid):
            for a, b in zip(old_mid, new_mid):
                one(a, b)
            return
        base = head
        od, nd = od[head:len(od) - tail], nd[head:len(nd) - tail]
        matcher = difflib.SequenceMatcher(None, od, nd, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            i1, i2, j1, j2 = i1 + base, i2 + base, j1 + base, j2 + base
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for a, b in zip(old[i1:i2], new[j1:j2]):
                    one(a, b)
                continue
            for a in old[i1:i2]:
                if not _overlaps(a, region):
                    problems.append(f"statement at line {_lines(a)[0]} changed outside the "
                                    f"fixes' region: {type(a).__name__}")
            if i1 == i2:
                neighbours = old[max(0, i1 - 1):i1 + 1]
                for b in new[j1:j2]:
                    if _is_import_torch(b) or any(_overlaps(n, region) for n in neighbours):
                        continue
                    problems.append(f"statement inserted before original statement "
                                    f"{i1 + 1} of its body outside the fixes' region: "
                                    f"{type(b).__name__}")

    def one(a: ast.AST, b: ast.AST) -> None:
        if _dump(a) == _dump(b):
            return
        if type(a) is type(b) and any(hasattr(a, name) for name in _BLOCKS) and (
            _header(a) == _header(b)
        ):
            for name in _BLOCKS:
                if hasattr(a, name):
                    compare(getattr(a, name), getattr(b, name))
            return
        if not _overlaps(a, region):
            problems.append(f"statement at line {_lines(a)[0]} changed outside the fixes' "
                            f"region: {type(a).__name__}")

    compare(before.body, after.body)
    return problems


def newline_style(raw: bytes) -> str:
    crlf = raw.count(b"\r\n")
    lf = raw.count(b"\n") - crlf
    if crlf and not lf:
        return "crlf"
    if crlf and lf:
        return "mixed"
    return "lf"


@dataclass
class FileCheck:
    path: str
    problems: Dict[str, List[str]] = field(default_factory=dict)
    fixes: Counter = field(default_factory=Counter)


def check_changed(path: str, raw_before: bytes, raw_after: bytes, before: Before,
                  settings=None) -> FileCheck:
    """Every check for one file the CLI changed (`before` from engine_before)."""
    from amplint.analysis.engine import lint_source
    from amplint.workspace.files import SourceFile, read_source

    settings = settings or _settings()
    check = FileCheck(path)

    def add(kind: str, message: str) -> None:
        check.problems.setdefault(kind, []).append(message)

    text_before = _decode(path, raw_before)
    text_after = _decode(path, raw_after)
    if text_before is None or text_after is None:
        add("mismatch", "file no longer decodes as it did")
        return check
    if compiles(raw_before, path) and not compiles(raw_after, path):
        add("broken", "compiled before the fix, does not compile after")
        return check
    expected = lint_source(path, text_before, settings, fix=True)
    check.fixes.update(expected.fixes_applied)
    if expected.fixed_source != text_after:
        add("mismatch", "the CLI wrote something else than the engine's fixed source")
    if raw_before.startswith(b"\xef\xbb\xbf") != raw_after.startswith(b"\xef\xbb\xbf"):
        add("mismatch", "BOM not kept")
    if newline_style(raw_before) != newline_style(raw_after) and newline_style(raw_before) != "mixed":
        add("mismatch", f"newline style {newline_style(raw_before)} became "
                        f"{newline_style(raw_after)}")
    # A cascade: a later fix round fixed a finding the first run did not report (a fix made a
    # new hazard appear, e.g. AMP122's scaler.scale(loss).backward() before a clip that AMP120
    # then unscales). Its changes may lie outside the first run's region: reported apart.
    cascade = is_cascade(before, expected.fixes_applied)
    for problem in changed_lines_outside(text_before, text_after, before.region,
                                         before.imports_torch):
        add("cascade-outside" if cascade else "outside", problem)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree_before, tree_after = ast.parse(text_before), ast.parse(text_after)
    except SyntaxError:
        pass  # did not compile before: only the line check applies
    else:
        for problem in ast_outside(tree_before, tree_after, before.region):
            add("cascade-outside" if cascade else "ast-outside", problem)
    # Idempotence and fixable findings left: from the second CLI run (see `run`).
    left = [d for d in expected.diagnostics if d.fix is not None and settings.allows(d.fix)]
    if left:
        add("fixable-left", ", ".join(sorted({f"{d.code}@{d.line}" for d in left})))
    return check


def is_cascade(before: "Before", fixes_applied: Counter) -> bool:
    """Did the fix loop apply more fixes of some code than the first run reported?"""
    return any(count > before.fixable_codes[code] for code, count in fixes_applied.items())


def _decode(path: str, raw: bytes) -> Optional[str]:
    from amplint.workspace.files import ReadError, read_source

    import amplint.workspace.files as files

    try:
        # read_source wants a path; decode the bytes the same way it does.
        with tempfile.NamedTemporaryFile("wb", suffix=".py", delete=False) as handle:
            handle.write(raw)
        try:
            return read_source(handle.name).text
        finally:
            os.unlink(handle.name)
    except ReadError:
        return None


# -- the whole run -------------------------------------------------------------------------------

@dataclass
class Report:
    files: int = 0
    findings: int = 0
    fixable: int = 0
    fixes: int = 0
    changed: int = 0
    injected_files: int = 0
    injected_sites: int = 0
    unparsable: int = 0
    findings_left: int = 0
    crashes: List[str] = field(default_factory=list)
    problems: Dict[str, List[str]] = field(default_factory=dict)  # kind -> "path: message"
    codes: Counter = field(default_factory=Counter)
    fixes_by_code: Counter = field(default_factory=Counter)
    seconds: Dict[str, float] = field(default_factory=dict)

    GATES = ("broken", "non-idempotent", "mismatch", "outside", "ast-outside")

    def count(self, kind: str) -> int:
        return len({p.split(": ", 1)[0] for p in self.problems.get(kind, [])})

    @property
    def ok(self) -> bool:
        return not self.crashes and all(self.count(k) == 0 for k in self.GATES)

    def summary(self) -> str:
        lines = [
            f"files {self.files}  findings {self.findings} (fixable {self.fixable})  "
            f"fixes {self.fixes}  files changed {self.changed}  findings left "
            f"{self.findings_left}"
            + (f"  (hazards injected at {self.injected_sites} sites in "
               f"{self.injected_files} files)" if self.injected_files else ""),
            f"crashes {len(self.crashes)}  broken {self.count('broken')}  non-idempotent "
            f"{self.count('non-idempotent')}  mismatch {self.count('mismatch')}  outside "
            f"{self.count('outside')}  ast-outside {self.count('ast-outside')}  "
            f"fixable-left {self.count('fixable-left')}  cascade-outside "
            f"{self.count('cascade-outside')}  (unparsable originals "
            f"{self.unparsable})",
            "findings by code: " + ", ".join(f"{c} {n}" for c, n in sorted(self.codes.items())),
            "fixes by code: " + ", ".join(f"{c} {n}" for c, n in sorted(self.fixes_by_code.items())),
            "seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in self.seconds.items()),
        ]
        for crash in self.crashes:
            lines.append(f"CRASH {crash}")
        for kind in sorted(self.problems):
            for problem in self.problems[kind]:
                lines.append(f"{kind.upper()} {problem}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "files": self.files, "findings": self.findings, "fixable": self.fixable,
            "fixes": self.fixes, "changed": self.changed,
            "injected_files": self.injected_files, "injected_sites": self.injected_sites, "findings_left": self.findings_left,
            "unparsable": self.unparsable, "crashes": self.crashes,
            "counts": {k: self.count(k) for k in self.GATES + ("fixable-left", "cascade-outside")},
            "problems": self.problems, "codes": dict(self.codes),
            "fixes_by_code": dict(self.fixes_by_code), "seconds": self.seconds, "ok": self.ok,
        }


def _before_job(args: Tuple[str, str]) -> Tuple[str, Before]:
    root, relative = args
    path = os.path.join(root, relative)
    from amplint.workspace.files import ReadError, read_source

    try:
        text = read_source(path).text
    except ReadError:
        return relative, Before()
    return relative, engine_before(relative, text)


def _check_job(args) -> FileCheck:
    relative, raw_before, raw_after, before = args
    try:
        return check_changed(relative, raw_before, raw_after, before)
    except Exception as exc:  # a checker failure is reported, not hidden
        check = FileCheck(relative)
        check.problems["checker-error"] = [f"{type(exc).__name__}: {exc}"]
        return check


def _map(function, items, jobs: int):
    if jobs <= 1 or len(items) < 8:
        return [function(item) for item in items]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        return list(pool.imap(function, items, chunksize=8))


def run(sources: Sequence[str], workdir: str, jobs: int = 1,
        log=lambda message: None, plant: bool = False) -> Report:
    report = Report()
    timer = time.monotonic()
    files = collect(sources)
    work = os.path.join(workdir, "corpus")
    relative = copy_corpus(files, work)
    if plant:
        for rel in relative:
            path = os.path.join(work, rel)
            with open(path, "rb") as handle:
                raw = handle.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            new, sites = inject(rel, text)
            if sites:
                with open(path, "wb") as handle:
                    handle.write(new.encode("utf-8"))
                report.injected_files += 1
                report.injected_sites += sites
        log(f"injected hazards at {report.injected_sites} sites in {report.injected_files} files")
    originals = {}
    for rel in relative:
        with open(os.path.join(work, rel), "rb") as handle:
            originals[rel] = handle.read()
    report.files = len(relative)
    report.seconds["copy"] = time.monotonic() - timer
    log(f"copied {len(relative)} files to {work}")

    timer = time.monotonic()
    befores = dict(_map(_before_job, [(work, r) for r in relative], jobs))
    report.seconds["engine-before"] = time.monotonic() - timer
    for rel, before in befores.items():
        report.findings += before.findings
        report.fixable += before.fixable
        report.codes.update(before.codes)
        report.crashes.extend(before.crashes)
    log(f"engine: {report.findings} findings ({report.fixable} fixable), "
        f"{len(report.crashes)} rule crashes")

    timer = time.monotonic()
    first = run_cli(work, relative, jobs)
    report.seconds["cli-fix"] = first.seconds
    report.findings_left = len(first.findings_left)
    if any(code not in (0, 1) for code in first.returncodes):
        reported = set(report.crashes)
        internal = [e for e in first.errors if "internal error" in e]
        if not internal:
            report.crashes.append(f"CLI exit codes {sorted(set(first.returncodes))}")
        for line in internal:
            text = line[len("error: "):] if line.startswith("error: ") else line
            if text not in reported:
                report.crashes.append(text)
    for line in first.errors:
        if "Traceback" in line:
            report.crashes.append("CLI printed a traceback: " + line)
        elif "fix skipped" in line:
            report.crashes.append(line)
        elif "syntax error" in line or "cannot parse" in line:
            report.unparsable += 1
    log(f"CLI --fix: {len(first.errors)} error lines, exit codes "
        f"{sorted(set(first.returncodes))}, {first.seconds:.0f}s")

    changed = []
    for rel in relative:
        with open(os.path.join(work, rel), "rb") as handle:
            after = handle.read()
        if after != originals[rel]:
            changed.append((rel, after))
    report.changed = len(changed)
    log(f"{len(changed)} files changed")

    timer = time.monotonic()
    snapshot = {rel: after for rel, after in changed}
    second = run_cli(work, [rel for rel, _ in changed], jobs) if changed else CliRun()
    report.seconds["cli-second"] = second.seconds
    for rel, after in changed:
        with open(os.path.join(work, rel), "rb") as handle:
            if handle.read() != snapshot[rel]:
                report.problems.setdefault("non-idempotent", []).append(
                    f"{rel}: a second CLI run changed the file again")
    if any(code not in (0, 1) for code in second.returncodes) or any(
        "internal error" in e or "Traceback" in e or "fix skipped" in e for e in second.errors
    ):
        report.crashes.extend(f"(second run) {e}" for e in second.errors)
    prefix = os.path.join(work, "")
    for finding in second.findings_left:
        if finding.get("fix") is not None:
            name = finding["filename"]
            name = name[len(prefix):] if name.startswith(prefix) else name
            report.problems.setdefault("fixable-left", []).append(
                f"{name}: {finding['code']} at line {finding['line']} still fixable after --fix")
    # Files the CLI did not change but the engine would have fixed: a write went missing.
    for rel, before in befores.items():
        if before.fixable and rel not in snapshot and not before.crashes:
            report.problems.setdefault("fixable-left", []).append(
                f"{rel}: {before.fixable} fixable findings, file not changed")

    timer = time.monotonic()
    checks = _map(_check_job, [(rel, originals[rel], after, befores[rel])
                               for rel, after in changed], jobs)
    report.seconds["checks"] = time.monotonic() - timer
    for check in checks:
        report.fixes_by_code.update(check.fixes)
        for kind, messages in check.problems.items():
            report.problems.setdefault(kind, []).extend(f"{check.path}: {m}" for m in messages)
    report.fixes = sum(report.fixes_by_code.values())
    return report


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="folders of Python files")
    parser.add_argument("--torch", action="store_true", help="add the installed torch's .py files")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--keep", metavar="DIR", help="work in DIR (kept) instead of a temp dir")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--inject", action="store_true",
                        help="plant AMP hazards into the copies first (see `inject`)")
    args = parser.parse_args(argv)
    sources = list(args.sources) or [s for s in DEFAULT_SOURCES if os.path.isdir(s)]
    if args.torch:
        sources.append(torch_source_dir())
    if not sources:
        parser.error("no sources (give folders, or --torch)")

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    if args.keep:
        if os.path.exists(args.keep):
            shutil.rmtree(args.keep)
        os.makedirs(args.keep)
        report = run(sources, args.keep, args.jobs, log, args.inject)
    else:
        with tempfile.TemporaryDirectory(prefix="amplint-corpus-") as workdir:
            report = run(sources, workdir, args.jobs, log, args.inject)
    print(report.summary())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report.to_json(), handle, indent=2)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
