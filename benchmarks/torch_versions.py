"""Check amplint/analysis/data/torch_versions.py against torch's own released files (issue 28).

For every name of the table (an API some fix writes), this downloads torch's wheels from the
package registry and looks the name up in each release's files: it must be there at the
release the table gives, at every later release downloaded, and absent from the release just
before it. Prints one row per name with the file and line that defines it; exits 1 on any
mismatch. Needs the registry (pip download), so it is a benchmark script, not a test.

    python benchmarks/torch_versions.py                  # wheels cached in /tmp/amplint-torch-wheels
    python benchmarks/torch_versions.py --wheels DIR

How a name is looked up, in the wheel's own files (nothing is imported or run):
- Python APIs (`torch.amp.GradScaler`, `torch.cuda.amp.autocast`, `torch.nn.BCEWithLogitsLoss`):
  the dotted path is followed through the package's `__init__.py` files with `ast`, through
  `from .x import y`, `from x import *` and `import torch.x`, to the `class`/`def` that defines
  it; a keyword (`API(cache_enabled=)`) must be a parameter of that class's `__init__` (or its
  bases') or of that function. Each package on the way must be bound in its parent's
  `__init__.py` (so `import torch; torch.amp.X` works).
- APIs written in C (`torch.softmax`, `torch.finfo`, `torch.device`, `Tensor.new_zeros`): the
  release's type stubs (`torch/_C/*.pyi`) when it has them, else the argument-parser
  signature strings compiled into `libtorch_python` (`softmax(Tensor input, int64_t dim,
  ScalarType dtype)`), which are what Python calls are checked against.
The table's floor is torch 1.0 (`OLDEST`): a name the table dates 1.0 is checked to exist in
1.0 only (no older target is accepted, so nothing before it matters).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import zipfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from amplint.analysis.data.torch_versions import INTRODUCED, OLDEST, shown  # noqa: E402

# release -> (pip version, python, platform): macOS wheels are the smallest; x86_64 stops at 2.2
RELEASES: Dict[Tuple[int, int], Tuple[str, str, str]] = {
    (1, 0): ("1.0.0", "3.7", "macosx_10_7_x86_64"),
    (1, 4): ("1.4.0", "3.7", "macosx_10_9_x86_64"),
    (1, 5): ("1.5.0", "3.8", "macosx_10_9_x86_64"),
    (1, 6): ("1.6.0", "3.8", "macosx_10_9_x86_64"),
    (1, 8): ("1.8.1", "3.8", "macosx_10_9_x86_64"),
    (1, 9): ("1.9.0", "3.8", "macosx_10_9_x86_64"),
    (1, 10): ("1.10.0", "3.8", "macosx_10_9_x86_64"),
    (1, 11): ("1.11.0", "3.8", "macosx_10_9_x86_64"),
    (1, 12): ("1.12.0", "3.8", "macosx_10_9_x86_64"),
    (1, 13): ("1.13.0", "3.8", "macosx_10_9_x86_64"),
    (2, 0): ("2.0.0", "3.8", "macosx_10_9_x86_64"),
    (2, 2): ("2.2.0", "3.8", "macosx_10_9_x86_64"),
    (2, 3): ("2.3.0", "3.10", "macosx_11_0_arm64"),
    (2, 4): ("2.4.0", "3.10", "macosx_11_0_arm64"),
}
PREVIOUS = {(2, 0): (1, 13)}  # else (major, minor - 1)

# names the table keys by class alone: the class they belong to
CLASS_OF = {"GradScaler": "torch.cuda.amp.GradScaler", "Tensor": "Tensor"}

# C-implemented APIs: (regex on the release's .pyi stubs, regex on libtorch_python's strings,
# optionally an attribute of `torch` that torch's own Python code reads, as code, not in text)
C_API = {
    "torch.softmax": (r"def softmax\(", r"^softmax\(Tensor input, int"),
    "torch.softmax(dtype=)": (r"def softmax\(.*dtype", r"^softmax\(Tensor input, int\w* dim, .*dtype"),
    "torch.finfo": (r"^class finfo\b", r"^torch\.finfo$"),
    "torch.device": (r"^class device\b", r"^torch\.device$"),
    # dtype names are built from short literals the compiler inlines: before the stubs, the
    # evidence is torch's own Python code using them
    "torch.float16": (r"^float16: dtype", None, "float16"),
    "torch.float32": (r"^float32: dtype", None, "float32"),
}
for _m in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
    C_API[f"Tensor.{_m}"] = (rf"^\s+def {_m}\(", rf"^{_m}\(")

Where = Tuple[str, int]  # file inside the wheel, line


class Wheel:
    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path)
        self.names = set(self.zip.namelist())
        self._trees: Dict[str, ast.Module] = {}
        self._strings: Optional[List[str]] = None

    def module_file(self, module: str) -> Optional[str]:
        base = module.replace(".", "/")
        for candidate in (base + ".py", base + "/__init__.py"):
            if candidate in self.names:
                return candidate
        return None

    def tree(self, path: str) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = ast.parse(self.zip.read(path))
        return self._trees[path]

    def text(self, path: str) -> str:
        return self.zip.read(path).decode("utf-8", "replace")

    def binary_strings(self) -> List[str]:
        """Printable strings of libtorch_python (the C argument parser's signatures)."""
        if self._strings is None:
            member = next((n for n in sorted(self.names)
                           if re.search(r"torch/lib/libtorch_python\.(dylib|so)", n)), None)
            data = self.zip.read(member) if member else b""
            self._strings = [s.decode() for s in re.findall(rb"[\x20-\x7e]{6,}", data)]
        return self._strings


def _top_level(body):
    """Statements of a module body, looking inside top-level if/try (version switches)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try)):
            for part in (stmt.body, stmt.orelse, getattr(stmt, "finalbody", []),
                         *[h.body for h in getattr(stmt, "handlers", [])]):
                yield from _top_level(part)


def _absolute(module: str, path: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    parts = package.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def binding(wheel: Wheel, module: str, name: str, seen=None):
    """(file, line, ClassDef/FunctionDef or None) that binds `name` in `module`, following
    imports to the definition; None when the module does not bind it."""
    seen = seen or set()
    if (module, name) in seen:
        return None
    seen.add((module, name))
    path = wheel.module_file(module)
    if path is None:
        return None
    for stmt in _top_level(wheel.tree(path).body):
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name == name:
            return path, stmt.lineno, stmt
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return path, stmt.lineno, None
        if isinstance(stmt, ast.ImportFrom):
            source = _absolute(module, path, stmt)
            for alias in stmt.names:
                if alias.name == "*":
                    found = binding(wheel, source, name, seen)
                    if found:
                        return found
                elif (alias.asname or alias.name) == name:
                    found = binding(wheel, source, alias.name, seen)
                    if found is None and wheel.module_file(f"{source}.{alias.name}"):
                        return path, stmt.lineno, None  # a submodule
                    return found
    return None


def package_bound(wheel: Wheel, parent: str, child: str) -> Optional[Where]:
    """Where `parent/__init__.py` makes `parent.child` an attribute (importing it)."""
    path = wheel.module_file(parent)
    if path is None:
        return None
    full = f"{parent}.{child}"
    for stmt in _top_level(wheel.tree(path).body):
        if isinstance(stmt, ast.Import) and any(
                a.name == full or a.name.startswith(full + ".") for a in stmt.names):
            return path, stmt.lineno
        if isinstance(stmt, ast.ImportFrom):
            source = _absolute(parent, path, stmt)
            if source == full or source.startswith(full + "."):
                return path, stmt.lineno
            if source == parent and any(a.name == child for a in stmt.names):
                return path, stmt.lineno
    # importing a submodule anywhere sets it on its parent: `from .. import functional as F`
    # at the top of torch/nn/modules/conv.py makes `torch.nn.functional` work after `import torch`
    for other in sorted(wheel.names):
        if not (other.startswith(parent.replace(".", "/") + "/") and other.endswith(".py")):
            continue
        module = other[:-3].replace("/", ".").removesuffix(".__init__")
        try:
            body = wheel.tree(other).body
        except SyntaxError:
            continue
        for stmt in body:
            if isinstance(stmt, ast.ImportFrom):
                source = _absolute(module, other, stmt)
                if source == full or source == parent and any(a.name == child for a in stmt.names):
                    return other, stmt.lineno
    return None


def python_api(wheel: Wheel, dotted: str):
    """(file, line, node) of the definition of a dotted torch path, or None."""
    parts = dotted.split(".")
    module = parts[0]
    for i, part in enumerate(parts[1:], 1):
        child = f"{module}.{part}"
        if wheel.module_file(child) and i < len(parts) - 1:
            if package_bound(wheel, module, part) is None:
                return None
            module = child
            continue
        if i != len(parts) - 1:
            return None
        return binding(wheel, module, part)
    return None


def _class_member(wheel: Wheel, found, member: str, depth=0):
    """(file, line, node) of `member` in a class or its bases (bases resolved by name)."""
    path, _, cls = found
    if not isinstance(cls, ast.ClassDef) or depth > 5:
        return None
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == member:
            return path, stmt.lineno, stmt
    module = path[:-3].replace("/", ".").removesuffix(".__init__")
    for base in cls.bases:
        dotted = ast.unparse(base)
        if "." in dotted:
            head, _, rest = dotted.partition(".")
            owner = binding(wheel, module, head)
            base_found = None
            if owner and owner[2] is None:  # an imported module: `amp.GradScaler`
                for stmt in _top_level(wheel.tree(path).body):
                    if isinstance(stmt, ast.Import):
                        for a in stmt.names:
                            if (a.asname or a.name.split(".")[0]) == head:
                                base_found = python_api(wheel, f"{a.name}.{rest}" if a.asname else dotted)
            base_found = base_found or python_api(wheel, dotted)
        else:
            base_found = binding(wheel, module, dotted)
        if base_found:
            inner = _class_member(wheel, base_found, member, depth + 1)
            if inner:
                return inner
    return None


def _has_parameter(node: ast.FunctionDef, name: str) -> bool:
    """`name` is a parameter, or a `**kwargs` key the body compares by name (torch 1.10's
    `autocast.__init__(self, device_type, enabled=True, **kwargs)` reads `key == 'cache_enabled'`)."""
    args = node.args
    if any(a.arg == name for a in args.args + args.kwonlyargs + args.posonlyargs):
        return True
    return args.kwarg is not None and any(
        isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value == name
                                           for c in [n.left, *n.comparators])
        for n in ast.walk(node))


def locate(wheel: Wheel, name: str) -> Optional[Where]:
    """Where a table name is defined in this release, or None."""
    if name in C_API:
        stub_re, binary_re, use_re = (C_API[name] + (None,))[:3]
        stubs = sorted(n for n in wheel.names
                       if re.fullmatch(r"torch/_C/[^/]*\.pyi|torch/__init__\.pyi", n))
        for stub in stubs:
            for line_no, line in enumerate(wheel.text(stub).splitlines(), 1):
                if re.search(stub_re, line):
                    return stub, line_no
        for s in wheel.binary_strings() if binary_re else ():
            if re.search(binary_re, s):
                return f"libtorch_python: {s!r}", 0
        for path in sorted(wheel.names) if use_re else ():
            if path.startswith("torch/") and path.endswith(".py") and "/test" not in path:
                try:
                    tree = wheel.tree(path)
                except SyntaxError:
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.Attribute) and node.attr == use_re and \
                            isinstance(node.value, ast.Name) and node.value.id == "torch":
                        return f"{path} (code reads it)", node.lineno
        return None
    base, _, keyword = name.partition("(")
    keyword = keyword.rstrip("=)")
    head, _, member = base.partition(".")
    if head in CLASS_OF and head != "Tensor":
        found = python_api(wheel, CLASS_OF[head])
        if found is None:
            return None
        base, keyword = CLASS_OF[head], keyword
        if member:
            found = _class_member(wheel, found, member)
            return found and found[:2]
    else:
        found = python_api(wheel, base)
    if found is None:
        return None
    if keyword:
        node = found[2]
        if isinstance(node, ast.ClassDef):
            init = _class_member(wheel, found, "__init__")
            return init[:2] if init and _has_parameter(init[2], keyword) else None
        if isinstance(node, ast.FunctionDef):
            return found[:2] if _has_parameter(node, keyword) else None
        return None
    return found[:2]


def wheel_path(directory: str, release: Tuple[int, int]) -> str:
    version, python, platform = RELEASES[release]
    for entry in os.listdir(directory):
        if entry.startswith(f"torch-{version}-") and entry.endswith(".whl"):
            return os.path.join(directory, entry)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary", ":all:", "--python-version", python, "--platform",
                    platform, f"torch=={version}", "-d", directory], check=True)
    return wheel_path(directory, release)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", default="/tmp/amplint-torch-wheels")
    args = parser.parse_args()
    os.makedirs(args.wheels, exist_ok=True)
    wheels: Dict[Tuple[int, int], Wheel] = {}
    failures = 0
    print(f"{'name':48} {'table':>5}  first  at the table's release; absent before")
    for name, (version, _) in INTRODUCED.items():
        if version not in RELEASES:
            print(f"{name:48} {shown(version):>5}  no wheel of {shown(version)} in RELEASES")
            failures += 1
            continue
        checks = [r for r in sorted(RELEASES) if r >= version]
        previous = PREVIOUS.get(version, (version[0], version[1] - 1))
        problems = []
        for release in checks:
            if release not in wheels:
                wheels[release] = Wheel(wheel_path(args.wheels, release))
            if locate(wheels[release], name) is None:
                problems.append(f"missing in {shown(release)}")
        where = locate(wheels[version], name)
        before = "-"
        if version > OLDEST:
            if previous not in RELEASES:
                problems.append(f"no wheel of {shown(previous)} to check absence")
            else:
                if previous not in wheels:
                    wheels[previous] = Wheel(wheel_path(args.wheels, previous))
                found_before = locate(wheels[previous], name)
                before = f"absent in {shown(previous)}" if found_before is None else \
                    f"PRESENT in {shown(previous)} at {found_before[0]}:{found_before[1]}"
                if found_before is not None:
                    problems.append(before)
        at = f"{where[0]}:{where[1]}" if where else "-"
        print(f"{name:48} {shown(version):>5}  {'ok ' if not problems else 'BAD'}  {at}; {before}"
              + (f"  [{'; '.join(problems)}]" if problems else ""))
        failures += bool(problems)
    print(f"{len(INTRODUCED) - failures}/{len(INTRODUCED)} entries agree with the released wheels")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
