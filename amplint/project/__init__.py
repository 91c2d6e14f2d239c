"""The project pass: regions that other files or framework settings put around this file's code.

    project = amplint.project.build(files, settings)   # path -> source text
    project.entries_for(path)       # EntryRegions for lint_source(..., entries=...)
    project.dependencies(path)      # the files whose content decided those entries
    amplint.project.lint_project(files, settings, fix=False) -> {path: FileResult}

First pass (cheap): only files whose text can open an autocast region or hold a framework
setting are parsed and summarised (summary.py); the files a region then reaches, and the files
that may define framework-run classes (frameworks.py), are summarised on demand. Each file is
parsed at most once in this pass. Regions then propagate over the summaries to a fixpoint:
`with torch.autocast("cuda"): loss = crit(out, y)` in train.py, where `crit = FocalLoss()` comes
from losses.py, makes `FocalLoss.forward` run under that region, and through it whatever
`forward` calls in other files. The result does not depend on the order of the files: each
function keeps the most hazardous region that reaches it (enabled before maybe, CUDA before
unknown before CPU, float16 before unknown before bfloat16, then the citation's text).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from amplint.facts.regions import Enabled, EntryHalf, EntryRegion
from amplint.project import frameworks as fw
from amplint.project.classflow import ClassFlow
from amplint.project.summary import (
    CALLER_TEXT, ExternalCall, ModuleSummary, RegionInfo, Setting, summarize, top_level_functions,
)

__all__ = ["ProjectFacts", "build", "lint_project", "declared_matches", "EXPLAIN"]

# For `--explain` and the docs: how amplint decides that code runs under autocast.
EXPLAIN = """\
## How amplint decides that code runs under autocast

A line is *under autocast* when it runs inside an autocast region, enabled or maybe enabled:

- in the body of `with torch.autocast(...)` (any spelling: `torch.amp.autocast`,
  `torch.cuda.amp.autocast`, an imported `autocast`, a name or `functools.partial` bound to
  one, `nullcontext() if ... else autocast(...)`), of `with accelerator.autocast():`,
  `with fabric.autocast():` or `with optim_wrapper.optim_context(model):`, or of a function
  decorated with autocast or mmcv's `@auto_fp16`;
- in a function that such a region calls, in the same file or, when a whole project is linted,
  in another file: amplint follows imports (absolute, relative, re-exports through
  `__init__.py`), instances (`crit = FocalLoss()`, `self.crit = FocalLoss()` then
  `crit(out, y)` runs `FocalLoss.forward`) and inherited methods;
- in code a framework runs under autocast once mixed precision is on in the project:
  Lightning `Trainer(precision="16-mixed" | "bf16-mixed" | 16 | "16" | "bf16")` or a
  LightningCLI YAML `trainer: precision:` (`training_step`, `validation_step`, `test_step`,
  `predict_step` and `forward` of LightningModule subclasses); Fabric
  `Fabric(precision=...)` (`forward` of the modules given to `fabric.setup`); accelerate
  `Accelerator(mixed_precision="fp16" | "bf16")` (`forward` of the models given to
  `accelerator.prepare`); mmengine / MMDetection 3 `optim_wrapper = dict(type="AmpOptimWrapper")`
  (`forward` and `loss` of model classes registered in an mm* `MODELS` registry or derived
  from an mm* model base); detectron2 `AMPTrainer`, `SOLVER.AMP.ENABLED: True` (YAML or
  Python) or LazyConfig `train.amp.enabled = True` (`forward` of classes registered in a
  detectron2 registry or derived from a `detectron2.modeling` class); Hugging Face
  `TrainingArguments(fp16=True | bf16=True)` (`forward` of PreTrainedModel subclasses and of
  the model given to `Trainer(model=...)`; `compute_loss` is not autocast by current
  transformers, only the model's forward is);
- in modules declared to run under autocast: `[tool.amplint] autocast-modules =
  ["pkg/models/**"]`, with `autocast-device` (default "cuda") and `autocast-dtype`
  (default "float16").

A precision given as an expression (`precision=args.precision`, `enabled=use_amp`) makes a
*maybe enabled* region: the hazard is reported, since it is real in the mixed-precision run.
`enabled=False`, `"32-true"`, `"16-true"`, `mixed_precision="no"` make none. A region's device
and dtype travel with it: hazards that exist only on CUDA or only in float16 are not reported in
regions known to be on the CPU or in bfloat16. When several regions reach the same function,
the most hazardous one is cited.

Every message says why: `(autocast at line 12)`, `(called at line 30 under the autocast region
at line 12)`, `(called at train.py:14 under the autocast region at train.py:12)` (`called at train.py:14 and
2 more` when other calls under autocast reach it too),
`(Lightning runs `LitModel.training_step` under autocast: Trainer(precision="16-mixed") at
main.py:30)`. A file named on the command line (`amplint losses.py`) is linted in the context
of its project; with `--isolated-files` it uses only what that file shows.
"""

_CLASS_BASES = re.compile(r"class\s+\w+\s*\(([^)]*)")
_WORD = re.compile(r"\w+")

_ENABLED_RANK = {Enabled.TRUE: 0, Enabled.MAYBE: 1}
_DEVICE_RANK = {"cuda": 0, None: 1}
_DTYPE_RANK = {"float16": 0, None: 1, "bfloat16": 2}


@dataclass(frozen=True)
class _Candidate:
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    desc: str  # the region's source: "the autocast region at train.py:12"
    cite: str  # how this function is reached: "called at train.py:14 under ..."
    site: str = ""  # the call that reaches it: "train.py:14"

    @property
    def key(self):
        return (
            _ENABLED_RANK.get(self.enabled, 2), _DEVICE_RANK.get(self.device, 2),
            _DTYPE_RANK.get(self.dtype, 3), self.desc, self.cite,
        )


# paths -> their summaries (None: the file could not be summarised)
SummarizeMany = Callable[[List[str]], Mapping[str, Optional[ModuleSummary]]]


def needs_summary(text: str) -> bool:
    """The first pass's text test: can this file open a region or hold a framework setting?"""
    return bool(CALLER_TEXT.search(text) or fw.SETTING_TEXT.search(text))


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _is_yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


class ProjectFacts:
    def __init__(
        self, files: Mapping[str, str],
        declared: Optional[Tuple[Sequence[str], Optional[str], Optional[str], Optional[str]]] = None,
        keep_modules: bool = False,
        summaries: Optional[Mapping[str, Optional[ModuleSummary]]] = None,
        summarize_many: Optional[SummarizeMany] = None,
    ) -> None:
        """`summaries`: the first pass already done elsewhere (the runner's workers summarise
        the files they lint, from the same parse); `files` may then be a lazy mapping, read
        only for the files a region reaches. `summarize_many(paths)`: where the summaries this
        pass asks for later come from (the runner's pool and cache); by default they are made
        here, one by one."""
        self._summarize_many = summarize_many
        self.files = files if summaries is not None else dict(files)
        self._given = dict(summaries) if summaries is not None else None
        self._norm = {os.path.normpath(p): p for p in self.files}
        self.python = sorted(p for p in self.files if _is_python(p))
        dirs = [os.path.dirname(os.path.abspath(p)) for p in self.files]
        self.root = os.path.commonpath(dirs) if dirs else os.getcwd()
        self._shown: Dict[str, str] = {}
        self.summaries: Dict[str, Optional[ModuleSummary]] = {}
        self.first_pass: List[str] = []  # files the text test sent to the parser
        self._index = self._module_index()
        self._entries: Dict[str, Tuple[EntryRegion, ...]] = {}
        self.flow = ClassFlow(self)
        # --show-regions: what each region reaches through the class flow, and what it cannot
        self.reached: List[Tuple[str, str, str]] = []  # (region, call, "Net.forward in models/net.py")
        self.unresolved: List[Tuple[str, str, str]] = []  # (region, call at file:line, why)
        self.region_reach: Dict[str, List[str]] = {}  # region -> "Net.forward in models/net.py"
        self._deps: Dict[str, Set[str]] = {}
        self._bases_text: Dict[str, FrozenSet[str]] = {}
        self.settings: List[Setting] = []
        self._declared = declared
        # the parsed modules of the summarised files, for a lint pass that can take them
        self.keep_modules = keep_modules
        self.modules: Dict[str, object] = {}
        self._compute()

    # -- public ---------------------------------------------------------------------------
    def entries_for(self, path: str) -> Tuple[EntryRegion, ...]:
        return self._entries.get(path, ())

    def dependencies(self, path: str) -> Set[str]:
        """Other files whose content decided this file's entries (the region's file, the files
        along the calls, framework settings, base classes). A change elsewhere can still add an
        entry (a new `with autocast` calling into this file): rebuild the project pass (cheap)
        and compare `entries_for(path)` to know whether a cached result still holds."""
        return set(self._deps.get(path, set())) - {path}

    @property
    def parsed(self) -> List[str]:
        return sorted(self.summaries)

    # -- summaries ------------------------------------------------------------------------
    def summarise(self, paths: Iterable[str]) -> None:
        """Make sure these files are summarised: in one batch when the caller supplied a
        source of summaries (the pool and the cache), else here."""
        missing = [path for path in paths if path not in self.summaries]
        if not missing:
            return
        if self._summarize_many is not None:
            found = self._summarize_many(missing)
            for path in missing:
                self.summaries[path] = found.get(path)
            return
        for path in missing:
            self.summary(path)

    def summary(self, path: str) -> Optional[ModuleSummary]:
        if path not in self.summaries and self._summarize_many is not None and not self.keep_modules:
            self.summarise([path])
        if path not in self.summaries:
            module = parse_or_none(self.files[path])
            try:
                self.summaries[path] = summarize(path, self.files[path], module) if module else None
            except Exception:  # an analysis bug: the file is opaque to the project pass
                self.summaries[path] = None
            if module is not None and self.keep_modules:
                self.modules[path] = module
        return self.summaries[path]

    def display(self, path: str) -> str:
        """The path as messages cite it: relative to the folder that holds the whole project."""
        shown = self._shown.get(path)
        if shown is None:
            try:
                shown = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
            except ValueError:
                shown = path
            self._shown[path] = shown
        return shown

    # -- module names ---------------------------------------------------------------------
    def _module_index(self) -> Dict[str, List[str]]:
        index: Dict[str, List[str]] = {}
        for path in self.python:
            relative = self.display(path)
            parts = relative[: relative.rfind(".")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for start in range(len(parts)):
                index.setdefault(".".join(parts[start:]), []).append(path)
        return index

    def _closest(self, candidates: List[str], importer: str) -> str:
        here = os.path.dirname(os.path.abspath(importer))

        def score(path: str):
            there = os.path.abspath(path)
            common = os.path.commonpath([here, there])
            return (-len(common), path)

        return min(candidates, key=score)

    def _module_candidates(self, importer: str, ref: str) -> Iterable[Tuple[str, Tuple[str, ...]]]:
        if ref.startswith("."):
            level = len(ref) - len(ref.lstrip("."))
            parts = [p for p in ref[level:].split(".") if p]
            base = os.path.dirname(os.path.normpath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            for cut in range(len(parts), -1, -1):
                stem = os.path.join(base, *parts[:cut]) if cut else base
                # `from . import x` names the package's own __init__ when cut is 0
                names = (stem + ".py", os.path.join(stem, "__init__.py")) if cut else (
                    os.path.join(stem, "__init__.py"),
                )
                for candidate in names:
                    original = self._norm.get(os.path.normpath(candidate))
                    if original is not None:
                        yield original, tuple(parts[cut:])
            return
        parts = ref.split(".")
        for cut in range(len(parts), 0, -1):
            paths = self._index.get(".".join(parts[:cut]))
            if paths:
                yield self._closest(paths, importer), tuple(parts[cut:])

    def resolve_ref(self, importer: str, ref: str, depth: int = 0) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(file, names inside it) for a reference as `importer` writes it; re-exports followed."""
        if ref.startswith("?") or depth > 6:
            return None
        if ref.startswith("@"):
            return importer, (ref[1:],)
        for path, attrs in self._module_candidates(importer, ref):
            if not attrs:
                return path, ()
            summary = self.summary(path)
            if summary is None:
                continue
            head = attrs[0]
            if head in summary.classes or head in summary.functions or (
                summary.flow is not None and head in summary.flow.globals
                and head not in summary.imports
            ):
                return path, attrs
            if head in summary.imports:
                target = summary.imports[head]
                return self.resolve_ref(path, ".".join((target,) + attrs[1:]), depth + 1)
        return None

    def method(self, path: str, cls: str, name: str, depth: int = 0, seen=None) -> Optional[Tuple[str, str]]:
        summary = self.summary(path)
        if summary is None or depth > 8:
            return None
        info = summary.classes.get(cls)
        if info is None:
            return None
        if seen is not None:
            seen.add(path)
        if name in info.methods:
            return path, f"{cls}.{name}"
        for base in info.bases:
            found = self.resolve_ref(path, base)
            if found is not None and len(found[1]) == 1:
                hit = self.method(found[0], found[1][0], name, depth + 1, seen)
                if hit is not None:
                    return hit
        return None

    def external_bases(self, path: str, cls: str, seen: Set[str], depth: int = 0) -> Set[str]:
        """References of the non-project classes `cls` derives from (transitively); `seen`
        collects the files consulted."""
        summary = self.summary(path)
        if summary is None or depth > 8 or cls not in summary.classes:
            return set()
        seen.add(path)
        info = summary.classes[cls]
        found = set(info.decorators)
        for base in info.bases:
            target = self.resolve_ref(path, base)
            if target is not None and len(target[1]) == 1:
                found |= self.external_bases(target[0], target[1][0], seen, depth + 1)
            elif not base.startswith(("@", "?")):
                found.add(base)
        return found

    def targets(self, path: str, call: ExternalCall) -> List[Tuple[str, str]]:
        found = self.resolve_ref(path, call.ref)
        if found is None:
            return []
        where, attrs = found
        summary = self.summary(where)
        if summary is None or not attrs:
            return []
        if call.kind == "call":
            if len(attrs) == 1 and attrs[0] in summary.functions and "." not in attrs[0]:
                return [(where, attrs[0])]
            if len(attrs) == 2 and attrs[0] in summary.classes:
                hit = self.method(where, attrs[0], attrs[1])
                return [hit] if hit else []
            return []
        if len(attrs) != 1 or attrs[0] not in summary.classes:
            return []
        names = ("forward", "__call__") if call.kind == "instance" else (call.attr,)
        for name in names:
            hit = self.method(where, attrs[0], name)
            if hit is not None:
                return [hit]
        return []

    # -- the pass -------------------------------------------------------------------------
    def _compute(self) -> None:
        if self._given is not None:
            self.summaries.update(self._given)
            self.first_pass = sorted(p for p in self._given if _is_python(p))
        else:
            for path in self.python:
                if needs_summary(self.files[path]):
                    self.first_pass.append(path)
                    self.summary(path)
        settings: List[Setting] = []
        for path in self.first_pass:
            summary = self.summaries.get(path)
            if summary is not None:
                settings.extend(summary.settings)
        for path in sorted(p for p in self.files if _is_yaml(p)):
            settings.extend(fw.yaml_settings(path, self.files[path]))
        self.settings = sorted(settings, key=lambda s: (s.framework, s.path, s.line, s.text))
        seeds: List[Tuple[str, str, _Candidate, FrozenSet[str]]] = []
        for path in self.first_pass:
            summary = self.summaries.get(path)
            if summary is None:
                continue
            for call, info in summary.roots:
                desc = f"{info.origin.what} at {self.display(info.origin.path)}:{info.origin.line}"
                site = f"{self.display(path)}:{call.line}"
                cite = f"called at {site} under {desc}"
                candidate = _Candidate(info.enabled, info.device, info.dtype, desc, cite, site)
                for target in self.targets(path, call):
                    seeds.append((target[0], target[1], candidate, frozenset({path})))
        seeds.extend(self._flow_seeds())
        seeds.extend(self._framework_seeds())
        seeds.extend(self._declared_seeds())
        self._propagate(seeds)
        for summary in self.summaries.values():
            if summary is not None:
                summary.release()

    # -- the class flow -------------------------------------------------------------------
    def _flow_seeds(self):
        """Calls under a region whose receiver only the class flow can resolve: `model(x)` where
        `model` is a parameter, `self.model(x)` stored from `Trainer(model, ...)`, a factory's
        or a registry's product."""
        seeds = []
        for path in self.first_pass:
            summary = self.summaries.get(path)
            if summary is None or summary.flow is None:
                continue
            for key, receiver, attr, text, line, index in summary.flow.roots:
                info = summary.region_infos[index]
                desc = f"{info.origin.what} at {self.display(info.origin.path)}:{info.origin.line}"
                where = f"{text} at {self.display(path)}:{line}"
                targets = self.flow.call_targets(path, key, receiver, attr)
                for target, held, source in targets:
                    chain = _chain(text, source, held)
                    cite = f"{chain}; called at {self.display(path)}:{line} under {desc}"
                    candidate = _Candidate(info.enabled, info.device, info.dtype, desc, cite,
                                           f"{self.display(path)}:{line}")
                    seeds.append((target[0], target[1], candidate, frozenset({path})))
                    self.reached.append((desc, where, f"{target[1]} in {self.display(target[0])} ({chain})"))
                if not targets and info.enabled != Enabled.FALSE:
                    self.unresolved.append((desc, where, self.flow.unresolved_reason(path, key, receiver)))
        return seeds

    def _dynamic_targets(self, path: str, key: str, candidate: "_Candidate"):
        summary = self.summaries.get(path)
        flow = summary.flow if summary is not None else None
        function = flow.functions.get(key) if flow is not None else None
        if function is None:
            return []
        out = []
        for receiver, attr, text, line in function.dynamic:
            for target, held, source in self.flow.call_targets(path, key, receiver, attr):
                chain = _chain(text, source, held)
                cite = f"{chain}; called at {self.display(path)}:{line} in code that runs under {candidate.desc}"
                out.append((target, _Candidate(
                    candidate.enabled, candidate.device, candidate.dtype, candidate.desc, cite,
                    f"{self.display(path)}:{line}",
                )))
        return out

    def _best_setting(self, framework: str) -> Optional[Setting]:
        found = [s for s in self.settings if s.framework == framework]
        if not found:
            return None
        return min(found, key=lambda s: (
            _ENABLED_RANK.get(s.enabled, 2), _DEVICE_RANK.get(s.device, 2),
            _DTYPE_RANK.get(s.dtype, 3), s.path, s.line, s.text,
        ))

    def _framework_seeds(self):
        active = {s.framework for s in self.settings}
        if not active:
            return []
        seeds = []
        # the files that may define the classes these frameworks run
        patterns = [fw.CLASS_TEXT[name] for name in sorted(active) if name in fw.CLASS_TEXT]
        if patterns:
            self.summarise(
                path for path in self.python
                if path not in self.summaries and any(p.search(self.files[path]) for p in patterns)
            )
            self._expand_subclasses()
        runs = {
            "lightning": (fw.is_lightning_module, fw.LIGHTNING_HOOKS, "Lightning runs"),
            "mmengine": (lambda r: fw.is_mm_model_base(r) or fw.is_mm_registration(r), fw.MM_METHODS,
                         "mmengine's AmpOptimWrapper runs"),
            "detectron2": (lambda r: fw.is_d2_model_base(r) or fw.is_d2_registration(r), ("forward",),
                           "detectron2's AMPTrainer runs"),
            "huggingface": (fw.is_hf_model_base, ("forward",), "the Hugging Face Trainer runs"),
        }
        for framework in sorted(active):
            setting = self._best_setting(framework)
            assert setting is not None
            where = f"{setting.text} at {self.display(setting.path)}:{setting.line}"
            desc = f"{fw.DESCRIPTIONS[framework]} ({where})"

            def seed(path: str, key: str, runner: str, deps: Set[str]) -> None:
                cite = f"{runner} `{key}` under autocast: {where}"
                candidate = _Candidate(setting.enabled, setting.device, setting.dtype, desc, cite)
                seeds.append((path, key, candidate, frozenset(deps | {setting.path})))

            if framework in runs:
                test, methods, runner = runs[framework]
                for path in sorted(self.summaries):
                    summary = self.summaries[path]
                    if summary is None:
                        continue
                    for cls in sorted(summary.classes):
                        seen: Set[str] = set()
                        if not any(test(ref) for ref in self.external_bases(path, cls, seen)):
                            continue
                        for method in methods:
                            if method in summary.classes[cls].methods:
                                seed(path, f"{cls}.{method}", runner, seen)
            # models handed to the framework: accelerator.prepare(model), Trainer(model=...)
            kinds = {"accelerate": ("accelerate",), "lightning": ("fabric",), "fabric": ("fabric",),
                     "huggingface": ("huggingface",)}.get(framework, ())
            for path in sorted(self.summaries):
                summary = self.summaries[path]
                if summary is None:
                    continue
                for kind, ref in summary.prepared:
                    if kind not in kinds or (kind == "fabric" and framework != "fabric"):
                        continue
                    seen = {path}
                    found = self.resolve_ref(path, ref)
                    if found is None or len(found[1]) != 1:
                        continue
                    hit = self.method(found[0], found[1][0], "forward", seen=seen)
                    if hit is not None:
                        runner = {"accelerate": "accelerate runs the prepared model's",
                                  "fabric": "Fabric runs the set-up model's",
                                  "huggingface": "the Hugging Face Trainer runs the model's"}[kind]
                        seed(hit[0], hit[1], runner, seen)
        return seeds

    def _expand_subclasses(self) -> None:
        """Summarise the files that subclass a class already summarised (`class M(Base)` where
        Base is a LightningModule subclass of another file), until none is added."""
        known: Set[str] = set()
        while True:
            names = {
                name for summary in self.summaries.values() if summary is not None
                for name in summary.classes
            } - {"Module", "Model", "object"}
            new = names - known
            if not new:
                return
            known |= new
            wanted = [path for path in self.python
                      if path not in self.summaries and self._base_words(path) & new]
            if not wanted:
                return
            self.summarise(wanted)

    def _base_words(self, path: str) -> FrozenSet[str]:
        """The words written between `class X(` and the next `)` anywhere in the file's text
        (one scan per file, however many subclass waves ask)."""
        found = self._bases_text.get(path)
        if found is None:
            found = frozenset(
                word for bases in _CLASS_BASES.findall(self.files[path]) for word in _WORD.findall(bases)
            )
            self._bases_text[path] = found
        return found

    def _declared_seeds(self):
        if not self._declared:
            return []
        globs, device, dtype, base = self._declared
        seeds = []
        for path in self.python:
            glob = declared_matches(path, globs, base)
            if glob is None:
                continue
            summary = self.summary(path)
            if summary is None:
                continue
            desc = f'autocast-modules = ["{glob}"]'
            for key in top_level_functions(summary):
                cite = f"declared to run under autocast by {desc}"
                candidate = _Candidate(Enabled.TRUE, device, dtype, desc, cite)
                seeds.append((path, key, candidate, frozenset()))
        return seeds

    def _propagate(self, seeds) -> None:
        best: Dict[Tuple[str, str], _Candidate] = {}
        deps: Dict[Tuple[str, str], FrozenSet[str]] = {}
        pending = list(seeds)
        sites: Dict[Tuple[str, str], Set[str]] = {}  # every call under autocast that reaches it
        while pending:
            path, key, candidate, chain = pending.pop()
            summary = self.summary(path)
            if summary is None or key not in summary.functions or summary.functions[key].decided:
                continue
            target = (path, key)
            if candidate.site:
                sites.setdefault(target, set()).add(candidate.site)
            current = best.get(target)
            if current is not None:
                if current.key < candidate.key:
                    continue
                if current == candidate:
                    if chain <= deps[target]:
                        continue
                    chain = chain | deps[target]
            best[target] = candidate
            deps[target] = chain
            # what this function and its same-file callees call in other files
            onward = chain | {path}
            stack, visited = [key], {key}
            while stack:
                function = summary.functions.get(stack.pop())
                if function is None:
                    continue
                for call in function.calls:
                    line = summary.call_line(call)
                    site = f"{self.display(path)}:{line}"
                    cite = f"called at {site} in code that runs under {candidate.desc}"
                    derived = _Candidate(candidate.enabled, candidate.device, candidate.dtype,
                                         candidate.desc, cite, site)
                    for other in self.targets(path, call):
                        if other[0] != path:
                            pending.append((other[0], other[1], derived, onward))
                for other, cite in self._dynamic_targets(path, function.key, candidate):
                    pending.append((other[0], other[1], cite, onward))
                for local in function.local:
                    callee = summary.functions.get(local)
                    if local not in visited and callee is not None and not callee.decided:
                        visited.add(local)
                        stack.append(local)
        entries: Dict[str, List[EntryRegion]] = {}
        for (path, key), candidate in best.items():
            summary = self.summaries[path]
            if summary is None or key not in top_level_functions(summary):
                continue
            self.region_reach.setdefault(candidate.desc, []).append(f"{key} in {self.display(path)}")
            entries.setdefault(path, []).append(EntryRegion(
                key, candidate.enabled, candidate.device, candidate.dtype,
                _cite_more(candidate, len(sites.get((path, key), ())) - 1),
            ))
            self._deps.setdefault(path, set()).update(deps[(path, key)])
        for (path, cls), (dtype, cite, where) in sorted(self.flow.half_instances().items()):
            entries.setdefault(path, []).append(EntryHalf(cls, dtype, cite))
            self._deps.setdefault(path, set()).add(where)
        self._entries = {
            path: tuple(sorted(found, key=lambda e: (e.target, type(e).__name__))) for path, found in entries.items()
        }


def _cite_more(candidate: _Candidate, more: int) -> str:
    """"called at train.py:14 and 2 more under ..." when other calls reach the function too."""
    head = f"called at {candidate.site} "
    if more < 1 or not candidate.site or not candidate.cite.startswith(head):
        return candidate.cite
    return f"called at {candidate.site} and {more} more " + candidate.cite[len(head):]


def _chain(text: str, source: Optional[str], held: str) -> str:
    """`model <- build_model(cfg) at train.py:7 -> Net in models/net.py`."""
    return f"{text} <- {source} -> {held}" if source else f"{text} -> {held}"


def _glob_regex(glob: str) -> "re.Pattern[str]":
    out = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
        i += 1
    return re.compile("".join(out) + "$")


def declared_matches(path: str, globs: Sequence[str], base: Optional[str] = None) -> Optional[str]:
    """The first of `globs` (relative to `base`, default the working directory) that matches
    `path`: `**` spans folders, `*` stays within one, a glob naming a folder covers all below it,
    a glob without `/` also matches the file name."""
    base = base or os.getcwd()
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(base)).replace(os.sep, "/")
    for glob in globs:
        pattern = glob[2:] if glob.startswith("./") else glob
        pattern = pattern.rstrip("/")
        regex = _glob_regex(pattern)
        if regex.match(relative) or _glob_regex(pattern + "/**").match(relative):
            return glob
        if "/" not in pattern and regex.match(os.path.basename(relative)):
            return glob
    return None


def parse_or_none(source: str):
    from amplint.engine import parse
    import libcst as cst

    try:
        return parse(source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError, TypeError):
        return None  # the lint pass reports it


def build(
    files: Mapping[str, str], settings=None, config=None, declared=None, keep_modules=False,
    summaries=None, summarize_many: Optional[SummarizeMany] = None,
) -> ProjectFacts:
    """The project facts for these files (path -> source text; YAML configuration files may be
    included for framework settings). `declared`: (globs, device, dtype, base folder) for
    code declared to run under autocast; by default read from `config.autocast_modules`,
    `config.autocast_device` ("cuda"), `config.autocast_dtype` ("float16"), relative to the
    folder of `config.path`."""
    if declared is None and config is not None and getattr(config, "autocast_modules", None):
        path = getattr(config, "path", None)
        declared = (
            tuple(config.autocast_modules),
            getattr(config, "autocast_device", None) or "cuda",
            getattr(config, "autocast_dtype", None) or "float16",
            os.path.dirname(os.path.abspath(path)) if path else None,
        )
    return ProjectFacts(files, declared, keep_modules, summaries, summarize_many)


def lint_project(files: Mapping[str, str], settings, fix: bool = False, config=None, declared=None):
    """build + engine.lint_source for every Python file, with the entries the project found."""
    import inspect

    from amplint.engine import lint_source

    # Reuse the first pass's parse where the engine can take it (`lint_source(..., module=)`).
    reuse = "module" in inspect.signature(lint_source).parameters
    project = build(files, settings, config, declared, keep_modules=reuse)
    results = {}
    for path in sorted(files):
        if not _is_python(path):
            continue
        extra = {"module": project.modules.pop(path)} if reuse and path in project.modules else {}
        results[path] = lint_source(
            path, files[path], settings, fix=fix, entries=project.entries_for(path), **extra
        )
    return results
