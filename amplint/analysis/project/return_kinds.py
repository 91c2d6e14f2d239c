"""The kind of value an imported function of another project file returns (issue 26), delivered
to the importing file as `facts.returned_values.EntryReturn`s with a `kind`, one per imported
name: what `FunctionReturns.remote` reads where a fact meets a call of that name (sam2's
`self.device = setup_device(...)` passed to an autocast as its device type, AMP131; ControlNet's
`sim.masked_fill_(~mask, max_neg_value(x))`, AMP111; waveglow's `model =
waveglow_from_config(cfg, fp16_run).cuda()` trained by a plain optimizer, AMP152). The
callee's side is read from its text with `ast` (project/return_values.py `return_kind`), one
summary per file.

Methods too: `Cls.m(...)` of an imported project class whose staticmethod or classmethod `m`
returns the kind (`DistUtils.local_device()`), keyed "Cls.m" (round 41); looked up only in files
whose text writes `@staticmethod` or `@classmethod`.

Asked only where a fact can meet the call (cost, issue 34): a file that imports a project name
it calls; "device" only where it writes `autocast(`, "finfo" only where it writes a fill
(`fill`), both only in a file that may run under autocast; "half" only where it builds a
`torch.optim.` optimizer over `.parameters()` and writes neither `autocast` nor `GradScaler`
(AMP152), or where it reduces (`.sum(`, `.mean(`, ...) and writes `.half(`
(AMP140/AMP141's float16 values: latent-diffusion's `model = load_model_from_config(...)`);
the imports read from the text (no summary made for this); a callee only in a
file whose text holds `device(` / `finfo(` / `.half()` (checked through re-exports before
anything is resolved)."""

from __future__ import annotations

import re
from typing import Dict, List, Sequence, Tuple

from amplint.analysis.facts.returned_values import EntryReturn
from amplint.analysis.project.function_entries import leads_to, may_run_under_autocast
from amplint.analysis.project.return_values import KIND_WORDS, return_kind
from amplint.analysis.project.site_text import CodeText
from amplint.analysis.project.text_tests import holds
from amplint.analysis.project.text_views import called_names, code_view

# the kinds a file's text may need: the fact that reads each, written where it meets the call
_NEEDS = {"device": "autocast(", "finfo": "fill", "half": "torch.optim."}
_METHOD_CALLED = re.compile(r"(?<![.\w])([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*\(")
# _METHOD_CALLED read backwards (`_methods_called`): led by the literal `(`, which the engine
# skips to (the lookbehind-led pattern is tried at every position: ~7x slower)
_METHOD_CALLED_BACKWARDS = re.compile(r"\(\s*(\w*[A-Za-z_])\.(\w*[A-Za-z_])(?![.\w])")
_REDUCES = re.compile(r"\.(sum|mean|norm|var|std|exp)\(")


def return_kind_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryReturn, ...]]:
    found: Dict[str, Tuple[EntryReturn, ...]] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        text = project.files.get(path) or ""
        # "device" and "finfo" only in a file that may run under autocast: asked first (a dict
        # lookup), so that the other files' texts are not scanned for their words
        under = may_run_under_autocast(project, path)
        kinds = {kind for kind, word in _NEEDS.items() if (under or kind == "half")
                 and (holds(project, path, word) if kind == "half" else word in text)}
        if "half" in kinds and (holds(project, path, "autocast") or holds(project, path, "GradScaler")
                                or ".parameters()" not in text):
            kinds.discard("half")  # AMP152 reads a file that trains without either
        # ".half(" within the files holding "half(", which local_callers.py asks of every file
        if holds(project, path, "half(") and ".half(" in text and _REDUCES.search(text):
            kinds.add("half")  # AMP140/AMP141 read a half model's outputs (a file casting its inputs too)
        if not kinds:
            continue
        words = [KIND_WORDS[kind] for kind in sorted(kinds)]
        entries: List[EntryReturn] = []
        methods = {}  # imported name -> the attributes called on it (`Dist.local_device()`)
        for name, attr in _methods_called(text):
            methods.setdefault(name, set()).add(attr)
        code = code_view(project, path)
        calls = [(name, ref, "") for name, ref in _imported_calls(project, path, code, called_names(project, path))]
        calls += [(name, ref, attr) for name, ref in _imported_calls(project, path, code, set(methods))
                  for attr in sorted(methods[name])]
        leads: Dict[Tuple[str, bool], bool] = {}  # per reference: `torch` is called on many attributes
        for name, ref, method in calls:
            key = (ref, bool(method))
            if key not in leads:  # a method of a class: a file that writes a staticmethod or classmethod
                leads[key] = leads_to(project, path, ref, lambda p: _may_return(project, p, words, bool(method)), False)
            if not leads[key]:
                continue
            target = project.resolve_ref(path, ref)
            if target is None or len(target[1]) != 1 or target[0] == path:
                continue
            where, (attr,) = target
            if method:  # a staticmethod or classmethod of the imported class
                name, attr = f"{name}.{method}", f"{attr}.{method}"
            kind = return_kind(where, project.files.get(where) or "", attr)
            if kind is None or kind[0] not in kinds:
                continue
            entries.append(EntryReturn(
                "", name, -1, f"{project.display(where)}: {attr}", line=kind[4],
                kind=kind[0], param=kind[1], index=kind[2], bound=kind[3]))
        if entries:
            found[path] = tuple(entries)
    return found


def _imported_calls(project, path: str, code: CodeText, called) -> List[Tuple[str, str]]:
    """(name, the reference it imports) for the names the file imports once at module level and
    calls, read from its text (site_text.py: no parse, no summary); from its summary where one
    is made and the text reader cannot vouch for its imports."""
    summary = project.summaries.get(path)
    imports = summary.imports if summary is not None else {}
    found = []
    for name in sorted(called):
        if code.sure and code.imported(name):
            binding = code.binding(name)
            if not binding.unknown:  # else the summary's module-level imports, if it is made
                if not binding.defs and not binding.classes and len(binding.imports) == 1 \
                        and binding.imports[0][1]:
                    found.append((name, binding.imports[0][0]))
                continue
        ref = imports.get(name)
        if ref is not None and not ref.startswith("?"):
            found.append((name, ref))
    return found


def _may_return(project, path: str, words, method: bool = False) -> bool:
    text = project.files.get(path) or ""
    if method and "@staticmethod" not in text and "@classmethod" not in text:
        return False
    return "return" in text and any(word in text for word in words)


def _methods_called(text: str) -> List[Tuple[str, str]]:
    """`_METHOD_CALLED.findall(text)`, in its order (the matches do not overlap, so those of
    the reversed text are the same, met last first)."""
    return [(name[::-1], attr[::-1]) for attr, name in reversed(_METHOD_CALLED_BACKWARDS.findall(text[::-1]))]
