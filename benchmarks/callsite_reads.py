"""How much of each file the project pass's call-site questions need (issue 34: "summarise only
what a question asks"). Runs amplint on a tree (`--no-cache -j 1`), records every file that a
call-site question (`FlowIndex._call_sites`) summarised first, the names the call-site search
asked of it, and which function keys of its flow facts anything read after the search (the
class flow evaluating a site's callee and arguments: locals, `self` stores, returns, ...).
Then, for two granularities of a partial summary, says how many of those files it would have
served without the full summary (every later read falls inside it) and what share of their
lines it holds:
    method: the functions/methods whose own source names an asked name;
    class:  the module-level functions and whole module-level classes whose source names one.
Also prints the CPU seconds of the whole summary of those files, split into ast.parse / tree
walk / summary run, and tries the class-granularity partial summary: the parsed tree with the
bodies of the other module-level functions and of the other classes' methods cut to `...`
(lines kept), summarised as usual. It prints that CPU against the full summary's, and the
files where a unit's facts (flow and FunctionSummary, module-level fields) differ from the
full summary's (a unit's facts may depend on code outside it: must be 0 for a sound design).

    python benchmarks/callsite_reads.py TREE
"""

from __future__ import annotations

import ast
import collections
import contextlib
import gc
import io
import sys
import time
import warnings


def record(tree: str):
    import amplint.analysis.project as project
    import amplint.analysis.project.flowindex as flowindex

    state = {"search": 0}
    first: dict = {}
    names = collections.defaultdict(set)
    read = collections.defaultdict(set)

    class Recorded(dict):
        def _mark(self, key):
            if not state["search"]:
                read[self.path].add(key)

        def get(self, key, default=None):
            self._mark(key)
            return dict.get(self, key, default)

        def __getitem__(self, key):
            self._mark(key)
            return dict.__getitem__(self, key)

        def __contains__(self, key):
            self._mark(key)
            return dict.__contains__(self, key)

    call_sites = flowindex.FlowIndex._call_sites

    def searched(self, name, question=None):
        state["search"] += 1
        try:
            before = set(self.p.summaries)
            found = call_sites(self, name, question)
            for path in self.p.summaries:
                if path not in before:
                    first.setdefault(path, name)
            for path in self._files_calling(name):
                names[path].add(name)
            return found
        finally:
            state["search"] -= 1

    summary_of = project.ProjectFacts.summary

    def summary(self, path):
        found = summary_of(self, path)
        flow = getattr(found, "flow", None)
        if path in first and flow is not None and not isinstance(flow.functions, Recorded):
            functions = Recorded(flow.functions)
            functions.path = path
            flow.functions = functions
        return found

    flowindex.FlowIndex._call_sites = searched
    project.ProjectFacts.summary = summary
    from amplint.cli.main import main

    sys.argv = ["amplint", tree, "--no-cache", "-j", "1", "--exit-zero", "--output-format", "json"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            main()
    except SystemExit:
        pass
    finally:
        flowindex.FlowIndex._call_sites = call_sites
        project.ProjectFacts.summary = summary_of
    return first, names, read


def units(text: str, names, granularity: str):
    """function key -> (inside the partial summary, lines of its unit if top-level)."""
    module = ast.parse(text)
    lines = text.split("\n")
    found = {}

    def walk(body, prefix, chosen, depth, in_class=False):
        for stmt in body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            start = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
            source = "\n".join(lines[start - 1:stmt.end_lineno])
            inside = chosen or any(name in source for name in names)
            key = prefix + stmt.name
            size = stmt.end_lineno - start + 1
            is_class = isinstance(stmt, ast.ClassDef)
            if not is_class:  # lines counted once: a top-level unit's (a method's for "method")
                counted = depth == 0 or (depth == 1 and in_class and granularity == "method")
                found[key] = (inside, size if counted else 0)
            elif inside and granularity == "class" and depth == 0:
                found[" class " + key] = (True, size)
            walk(stmt.body, key + ".", inside if (granularity == "class" or not is_class) else False,
                 depth + 1, is_class)

    walk(module.body, "", False, 0)
    return found, len(lines)


def cost(paths):
    from amplint.analysis.project.ast_summary import _AstSummarizer
    from amplint.workspace.files import read_source

    spent = collections.Counter()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for path in paths:
            text = read_source(path).text
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = ast.parse(text)
            parsed = time.process_time()
            try:
                summarizer = _AstSummarizer(path, text, module)
                walked = time.process_time()
                summarizer.run()
            except Exception:  # noqa: BLE001  (a refusal: LibCST summarises it)
                walked = time.process_time()
            spent["parse"] += parsed - start
            spent["walk"] += walked - parsed
            spent["run"] += time.process_time() - walked
    finally:
        if enabled:
            gc.enable()
    return spent


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _cut(function) -> None:
    first = function.body[0]
    stub = ast.Expr(ast.Constant(Ellipsis))
    for node in (stub, stub.value):
        node.lineno, node.col_offset = first.lineno, first.col_offset
        node.end_lineno, node.end_col_offset = first.lineno, first.col_offset + 3
    function.body = [stub]


def pruned(module, lines, names):
    """Cut the tree to the class-granularity units naming one of `names`; their names."""
    kept = set()
    for stmt in module.body:
        if not isinstance(stmt, _DEFS + (ast.ClassDef,)):
            continue
        start = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
        if any(name in "\n".join(lines[start - 1:stmt.end_lineno]) for name in names):
            kept.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for method in stmt.body:
                if isinstance(method, _DEFS):
                    _cut(method)
        else:
            _cut(stmt)
    return kept


def partial_trial(texts, names):
    from amplint.analysis.project.ast_summary import _AstSummarizer
    from amplint.analysis.project.ast_tree import refusal

    def calls(summary, function):
        return (function.decided, function.local,
                [(c.ref, c.kind, c.attr, summary.call_line(c)) for c in function.calls])

    spent = collections.Counter()
    unequal = []
    for path, text in texts.items():
        if refusal(text) is not None:
            continue
        start = time.process_time()
        try:
            full = _AstSummarizer(path, text, ast.parse(text)).run()
        except Exception:  # noqa: BLE001  (refused: LibCST summarises it)
            continue
        middle = time.process_time()
        module = ast.parse(text)
        kept = pruned(module, text.split("\n"), names[path])
        part = _AstSummarizer(path, text, module).run()
        spent["full"] += middle - start
        spent["partial"] += time.process_time() - middle

        def unit(key):
            return key == "" or key.split(".")[0] in kept
        differs = [f for f in ("imports", "classes", "prepared") if getattr(full, f) != getattr(part, f)]
        differs += [f for f in ("globals", "registrations", "timm_models")
                    if getattr(full.flow, f) != getattr(part.flow, f)]
        differs += ["flow " + key for key, found in full.flow.functions.items()
                    if unit(key) and part.flow.functions.get(key) != found]
        differs += ["functions " + key for key, found in full.functions.items()
                    if unit(key) and (key not in part.functions
                                      or calls(full, found) != calls(part, part.functions[key]))]
        if differs:
            unequal.append((path, differs[:3]))
    return spent, unequal


def main(tree: str) -> None:
    first, names, read = record(tree)
    print(f"{tree}: {len(first)} files summarised first by a call-site search")
    texts = {}
    for path in first:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                texts[path] = handle.read()
            ast.parse(texts[path])
        except (OSError, SyntaxError, ValueError):
            texts.pop(path, None)
    read_later = sum(1 for path in texts if read[path])
    print(f"  read after the search: {read_later} files")
    for granularity in ("method", "class"):
        served = kept = kept_served = total = served_total = keys = keys_read = keys_in = 0
        for path, text in texts.items():
            found, size = units(text, names[path], granularity)
            later = read[path] & {key for key in found if not key.startswith(" ")}
            inside = {key for key, (yes, _) in found.items() if yes and not key.startswith(" ")}
            unit_lines = sum(lines for yes, lines in found.values() if yes)
            keys += sum(1 for key in found if not key.startswith(" "))
            keys_read += len(later)
            keys_in += len(inside)
            total += size
            kept += unit_lines
            if later <= inside:
                served += 1
                served_total += size
                kept_served += unit_lines
        print(f"  {granularity:6}: function keys {keys}, read later {keys_read}, in the partial {keys_in}; "
              f"files served by the partial {served}/{len(texts)}; lines in the partial "
              f"{kept}/{total} ({100 * kept / max(total, 1):.0f} %), of the served files "
              f"{kept_served}/{served_total} ({100 * kept_served / max(served_total, 1):.0f} %)")
    enabled = gc.isenabled()
    gc.disable()
    try:
        spent = cost(list(texts))
        print("  CPU of their whole ast summaries: " + ", ".join(f"{k} {v:.2f} s" for k, v in spent.items()))
        trial, unequal = partial_trial(texts, names)
    finally:
        if enabled:
            gc.enable()
    print(f"  class-granularity partial (one parse, cut tree): CPU {trial['partial']:.2f} s vs full "
          f"{trial['full']:.2f} s ({trial['partial'] / max(trial['full'], 1e-9):.2f}); files whose units "
          f"differ from the full summary: {len(unequal)}")
    for path, differs in unequal[:5]:
        print(f"    {path}: {differs}")


if __name__ == "__main__":
    main(sys.argv[1])
