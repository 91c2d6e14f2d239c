"""Module outputs under a region, for the escape walk (AMP105 across files): the spec counts a
module's output under an autocast region as half, and the escape walk
(amplint.analysis.facts.escape) knows the torch modules and the module classes of its own file.
arcface_torch's train_v2.py runs `local_embeddings = backbone(img)` with `backbone =
get_model(cfg.network)` from backbones/: a project module of another file. The project pass
names such calls to the calling file.

A call is named when it is written under an active region of the calling file that the walk
reads as half, the file itself resolves nothing for it, and the class flow resolves its callee
to the forward of project classes only, every one of which is a module (its bases lead to
`torch.nn.*` through project classes). Anything else (a function, an unresolved value, a class
whose bases the project cannot follow) is not named.

The names stay in the project pass: escape_args.py reads them to follow the output into a
function of another file, region_args.py (through half_evidence.module_callee) to name a half
argument. The calling file is handed them (forward_call_entries) only where AMP101 can read
them: a function that also writes into a factory's buffer (a tester filling a float32 bank
with `embedder(trunk(x))`, tests/projects/forward_call_metric). Its own other uses of the
output are not reported from them: a region file the pass gives entries is linted twice, and
most training loops call a project module under their region.

Cost: only files with a region of their own are parsed (once, shared with the other entry
passes), and the flow is asked only about instance calls under their half regions."""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from amplint.analysis.data.triggers import FACTORY_NAMES, FACTORY_WRITE
from amplint.analysis.facts.half_evidence import EntryForwardCall
from amplint.analysis.facts.returned_escapes import EntryModuleOutput
from amplint.analysis.facts.tree import scope_key
from amplint.analysis.prefilter_names import CodeNames
from amplint.analysis.project.first_pass_walks import first_pass_answer
from amplint.analysis.project.function_entries import escape_facts, may_escape_in, parsed_facts, with_escape_walk

_MAX_CALLS = 64  # per project: the calls whose callees are looked up


def module_output_entries(project) -> None:
    """Puts EntryModuleOutput into `project.module_outputs` (path -> entries) and the classes'
    files into `project.module_output_deps`, for escape_args.py."""
    asked = 0
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None or not summary.regions or summary.flow is None:
            continue
        for key, dotted, line in _region_calls(project, path):
            asked += 1
            if asked > _MAX_CALLS:
                return
            _note(project, path, key, dotted, line)


def _region_calls(project, path: str):
    """(function key, dotted callee, line) of the calls under a half region of the file whose
    callee is a plain name, `self.attr` or `name.attr` the file does not resolve: the first
    pass's answer for the same text where its rules walked the escapes (first_pass_walks.py),
    else from the pass's own parse and walk."""
    known = first_pass_answer(project, path, "region_calls")
    if known is not None:
        return list(known)
    found_facts = escape_facts(project, path)
    return region_calls(*found_facts) if found_facts is not None else []


def region_calls(module, facts, escape):
    """`_region_calls` of a parsed file: its module, FileFacts (no entries) and their escape walk."""
    graph = facts.callgraph
    found = []
    for site in facts.tree.calls:
        dotted, frame, func = site.dotted, site.frame, site.node.func
        if dotted is None or len(dotted) > 2:
            continue
        if escape._half_region(frame) is None or facts.resolve(func, frame) is not None:
            continue
        if escape.float32_module(func, frame) or graph.class_of_instance(func, frame) is not None:
            continue  # the file's own walk reads it
        found.append((scope_key(frame.scope), dotted, site.node))
    if not found:
        return []
    from amplint.analysis.project.lines import node_lines

    lines = node_lines(module, [node for _, _, node in found])
    return [(key, dotted, lines.get(id(node), 0)) for key, dotted, node in found]


def _note(project, path: str, key: str, dotted: Tuple[str, ...], line: int) -> None:
    flow = project.flow
    functions = flow._flow(path)
    function = functions.functions.get(key) if functions is not None else None
    if function is None or not line:
        return
    records = [c for c in function.calls if c[3] == line and c[0] == dotted[-1]]
    if len(records) != 1:
        return
    receiver = records[0][1]
    # `model(x)`, `self.model(x)`, and a module held by a local: `model.encoder(x)`
    held = receiver[0] == "attr" and receiver[1][0] == "local"
    if receiver[0] not in ("local", "self") and not held:
        return
    targets = flow.call_targets(path, key, receiver, "")
    classes = {t[3] for t in targets}
    if not targets or None in classes or any(t[0][1].rsplit(".", 1)[-1] != "forward" for t in targets):
        return
    if not all(_is_module(project, cpath, cls) for cpath, cls in classes):
        return
    cite = ", ".join(sorted(t[1] for t in targets))
    project.__dict__.setdefault("module_outputs", {}).setdefault(path, set()).add(
        EntryModuleOutput(key, dotted, cite))
    project.__dict__.setdefault("module_output_deps", {}).setdefault(path, set()).update(
        cpath for cpath, _ in classes)


def _is_module(project, path: str, cls: str, seen: int = 0) -> bool:
    """Every way up the class's bases reaches `torch.nn.*` through project classes."""
    summary = project.summary(path)
    if summary is None or cls not in summary.classes or seen > 8:
        return False
    bases = summary.classes[cls].bases
    if not bases:
        return False
    for base in bases:
        if base.startswith("torch.nn."):
            continue
        found: Optional[Tuple[str, Tuple[str, ...]]] = project.resolve_ref(path, base)
        if found is None or len(found[1]) != 1 or not _is_module(project, found[0], found[1][0], seen + 1):
            return False
    return True


def output_facts(project, path: str):
    """(module, FileFacts) of a first-pass file, the facts given the module outputs named here
    for it (one FileFacts per file, shared); the file's own when none is named; None when the
    file is not parsed. Its escape walk is made on first use (`output_escape`)."""
    parsed = parsed_facts(project, path)
    outputs = project.__dict__.get("module_outputs", {}).get(path)
    if parsed is None or not outputs:
        return parsed
    cache = project.__dict__.setdefault("_output_facts", {})
    if path not in cache:
        from amplint.analysis.facts import FileFacts

        module = parsed[0]
        cache[path] = (module, FileFacts(module, tuple(sorted(outputs, key=repr))))
    return cache[path]


def output_escape(project, path: str):
    """(module, FileFacts, escape walk) of `output_facts`, the walk reading the module outputs
    named for the file (escape_returns.py and escape_args.py share it: one walk per file);
    None when the file is not parsed or the walk gives up."""
    return with_escape_walk(output_facts(project, path))


def forward_call_entries(project) -> None:
    """Hands the module outputs named above to the calling file as AMP101's evidence
    (half_evidence.EntryForwardCall), in `project.forward_calls` (path -> entries) with the
    classes' files in `project.forward_call_deps`: only where the calling function also writes
    into a factory's buffer (the prefilter's FACTORY_WRITE on that function, read with `ast`),
    the one use AMP101 makes of a module's output under a region. The calling file opens a
    region, so the first pass linted it already: an entry anywhere else would lint it again
    for nothing."""
    for path, outputs in sorted(project.__dict__.get("module_outputs", {}).items()):
        text = project.files.get(path)
        if not text or not any(name in text for name in FACTORY_NAMES):
            continue  # no factory named: no buffer it makes (and no second parse of the file)
        code = CodeNames.of(text)
        if code is None or FACTORY_WRITE not in code.names:
            continue
        kept = {EntryForwardCall(e.scope, e.callee, e.classes) for e in outputs
                if _writes_a_buffer(code, e.scope)}
        if kept:
            project.__dict__.setdefault("forward_calls", {})[path] = kept
            deps = project.__dict__.setdefault("forward_call_deps", {})
            deps[path] = set(project.module_output_deps[path])


def _writes_a_buffer(code: CodeNames, scope: str) -> bool:
    """A function called as `scope`'s last part (module level: the file) writes into a
    factory's buffer."""
    if not scope:
        return True  # the file's names hold the mark
    return any(FACTORY_WRITE in names for names in code.function_names(scope.rsplit(".", 1)[-1]))


def answer_or_walk(project, path: str, kind: str, read: Callable[..., List[tuple]]) -> tuple:
    """The first pass's answer `kind` for the file (first_pass_walks.py), else `read(module,
    facts, escape walk)` of the pass's own walk (with the module outputs named for it): () where
    no value can escape."""
    known = first_pass_answer(project, path, kind)
    if known is not None:
        return known
    if not may_escape_in(project, path):
        return ()  # no value escapes here: no walk
    parsed = output_escape(project, path)  # with the modules of other files it calls
    return tuple(read(*parsed)) if parsed is not None else ()
