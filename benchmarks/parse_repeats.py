"""Every `ast` parse of one cold `-j 1` run of the CLI (parsing.python_tree and own_tree): per
reader (the caller of python_tree/own_tree), its calls, the parses it made (a miss of the kept
trees), their CPU and characters; then the texts parsed again, by (first reader -> later reader),
with the characters parsed in between (a tree kept that long would have caught the repeat); and
what a kept-trees bound of N trees / C characters would have caught (a simulation over the
parses made, not a measurement: each kept tree costs ~10-27 bytes a character of its text).

    python benchmarks/parse_repeats.py [--rows N] --no-cache -j 1 --exit-zero [CLI ARGS] TREE
"""

from __future__ import annotations

import ast
import collections
import sys
import time

import amplint.analysis.parsing as parsing

_real_parse = ast.parse
reader_of_parse = {"now": "?"}
parses = []  # (text key, characters, reader), in parse order
calls = collections.defaultdict(lambda: [0, 0, 0.0, 0])  # reader -> calls, parses, CPU, chars


def _counting_parse(source, *args, **kwargs):
    parses.append(((len(source), hash(source)), len(source), reader_of_parse["now"]))
    return _real_parse(source, *args, **kwargs)


def _wrapped(name: str):
    inner = getattr(parsing, name)

    def reading(source, *args, **kwargs):
        frame = sys._getframe(1)
        reader = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"
        outer, reader_of_parse["now"] = reader_of_parse["now"], reader
        made = len(parses)
        start = time.process_time()
        try:
            return inner(source, *args, **kwargs)
        finally:
            row = calls[reader]
            row[0] += 1
            row[1] += len(parses) - made
            row[2] += time.process_time() - start
            row[3] += len(source) if len(parses) > made else 0
            reader_of_parse["now"] = outer

    return reading


def _rebind(wrapped) -> None:
    """Every module that imported the readers by name gets the counting ones."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("amplint") and module is not parsing:
            for name, function in wrapped.items():
                if getattr(module, name, None) is not None:
                    setattr(module, name, function)


def _kept_catches(max_trees: int, max_chars: int, per_tree: int) -> int:
    kept: "collections.OrderedDict" = collections.OrderedDict()
    held = caught = 0
    for key, chars, reader in parses:
        if reader.startswith("ast_registrations"):
            continue  # its tree is changed: never shared
        if key in kept:
            kept.move_to_end(key)
            caught += chars
            continue
        if chars <= per_tree:
            kept[key] = chars
            held += chars
            while len(kept) > max_trees or held > max_chars:
                held -= kept.popitem(last=False)[1]
    return caught


def _report(rows: int) -> None:
    out = sys.stderr
    print("reader                                        calls parses    CPU s     chars", file=out)
    for reader, (n, made, cpu, chars) in sorted(calls.items(), key=lambda kv: -kv[1][2])[:rows]:
        print(f"{reader:45} {n:5} {made:6} {cpu:8.3f} {chars:9}", file=out)
    seen, at, pairs = {}, 0, collections.defaultdict(lambda: [0, 0, []])
    for key, chars, reader in parses:
        if key in seen:
            first, first_at = seen[key]
            row = pairs[(first, reader)]
            row[0] += 1
            row[1] += chars
            row[2].append(at - first_at)
        seen[key] = (reader, at)
        at += chars
    print("\nparsed again: first reader -> later reader   texts     chars  median chars between", file=out)
    for (first, later), (n, chars, gaps) in sorted(pairs.items(), key=lambda kv: -kv[1][1])[:rows]:
        gaps.sort()
        print(f"{first:40} -> {later:40} {n:4} {chars:9} {gaps[len(gaps) // 2]:10}", file=out)
    print(f"\nparses {len(parses)} of {len(seen)} texts; again {sum(p[1] for p in pairs.values())} chars", file=out)
    base = _kept_catches(4, 1 << 20, 1 << 18)
    for trees, chars, per in ((4, 1 << 20, 1 << 18), (16, 1 << 20, 1 << 18), (16, 1 << 19, 1 << 17),
                              (1 << 30, 1 << 20, 1 << 18), (1 << 30, 1 << 22, 1 << 20)):
        shown = "any number of" if trees >= 1 << 30 else str(trees)
        print(f"kept {shown} trees, {chars} chars ({per} a tree): would catch "
              f"{_kept_catches(trees, chars, per) - base} more chars of parses", file=out)


def main() -> None:
    rows = 30
    args = sys.argv[1:]
    if args[:1] == ["--rows"]:
        rows, args = int(args[1]), args[2:]
    ast.parse = _counting_parse
    import amplint.run.runner  # noqa: F401  (the modules that import the readers by name)
    import amplint.analysis.project  # noqa: F401
    import pkgutil, importlib  # noqa: E401
    for package in ("amplint.analysis.project", "amplint.analysis"):
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
            try:
                importlib.import_module(f"{package}.{info.name}")
            except Exception:  # noqa: BLE001  (a module that does not import alone: not a reader)
                pass
    _rebind({name: _wrapped(name) for name in ("python_tree", "own_tree")})
    from amplint.cli.main import main as cli

    sys.argv = ["amplint"] + args
    try:
        cli()
    finally:
        _report(rows)


if __name__ == "__main__":
    main()
