"""Framework regions: once a framework setting turns mixed precision on in the project
(Lightning, Fabric, accelerate, mmengine, detectron2, Hugging Face; see frameworks.py), the
methods that framework runs under autocast are seeded with that setting's region."""

from __future__ import annotations

import re
from typing import Optional, Set

from amplint.analysis.project import frameworks as fw
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.project.candidates import Candidate, hazard_rank
from amplint.analysis.project.config_scope import config_classes, named_classes
from amplint.analysis.project.framework_scope import SCOPED, scoped_runs
from amplint.analysis.project.seed_files import SeedFiles
from amplint.analysis.project.summary import Setting


# framework -> (is a base reference one it runs?, the methods it runs, "Lightning runs")
_RUNS = {
    "lightning": (fw.is_lightning_module, fw.LIGHTNING_HOOKS, "Lightning runs"),
    "mmengine": (lambda r: fw.is_mm_model_base(r) or fw.is_mm_registration(r), fw.MM_METHODS,
                 "mmengine's AmpOptimWrapper runs"),
    "detectron2": (lambda r: fw.is_d2_model_base(r) or fw.is_d2_registration(r), ("forward",),
                   "detectron2's AMPTrainer runs"),
    "huggingface": (fw.is_hf_model_base, ("forward",), "the Hugging Face Trainer runs"),
}
# framework -> the kinds of `prepared` models it runs: accelerator.prepare(model), Trainer(model=...)
_PREPARED_KINDS = {"accelerate": ("accelerate",), "lightning": ("fabric",), "fabric": ("fabric",),
                   "huggingface": ("huggingface",)}
_SCOPED_RUNNER = {"lightning": "Lightning runs", "fabric": "Fabric runs the set-up model's",
                  "accelerate": "accelerate runs the prepared model's",
                  "huggingface": "the Hugging Face Trainer runs"}
_INSTANCE = {"lightning": "Trainer", "fabric": "Fabric", "accelerate": "Accelerator",
             "huggingface": "TrainingArguments", "mmengine": "config", "detectron2": "config"}
CONFIG_SCOPED = frozenset({"mmengine", "detectron2"})
_MATCHING = {"lightning": "LightningModule", "fabric": "model given to a `setup(...)`",
             "accelerate": "model given to a `prepare(...)`",
             "huggingface": "PreTrainedModel and model given to a Trainer",
             "mmengine": "registered model class", "detectron2": "registered model class"}
_PREPARED_RUNNER = {"accelerate": "accelerate runs the prepared model's",
                    "fabric": "Fabric runs the set-up model's",
                    "huggingface": "the Hugging Face Trainer runs the model's"}


def framework_seeds(project):
    """(path, "Class.method", Candidate, files that decided it) for every method a framework
    with mixed precision on runs under autocast."""
    active = {s.framework for s in project.settings}
    if not active:
        return []
    project.flow.summarise_owed()  # the loops below read every summary made so far
    seeds = []
    # the files that may define the classes these frameworks run
    patterns = [fw.CLASS_TEXT[name] for name in sorted(active) if name in fw.CLASS_TEXT]
    plan = None
    prepared = any(_PREPARED_KINDS.get(name) for name in active)
    if patterns:
        chosen = [path for path in project.python
                  if path not in project.summaries and any(p.search(project.files[path]) for p in patterns)]
        if not prepared:
            # only a class's methods are seeded here; a file that defines none is summarised
            # when a region reaches it (detectron2: 49 of the 125 files its text test picks)
            project.deferred.update(path for path in chosen if not _DEFINES_CLASS.search(project.files[path]))
            chosen = [path for path in chosen if path not in project.deferred]
        # with their subclasses, summarised when a loop below reads every summary
        plan = project.seed_plan = SeedFiles(project, chosen)
    for framework in sorted(active):
        settings = [s for s in project.settings if s.framework == framework]
        unscoped = []
        for setting in settings:  # scoped by the class flow to the models its instance runs
            gaps: list = []
            if framework in CONFIG_SCOPED:  # ... or to the model its config builds
                found = _config_seeds(project, setting)
                if found is None:
                    unscoped.append(setting)
                seeds.extend(found or ())
                continue
            runs = scoped_runs(project, setting, gaps) if framework in SCOPED else None
            if runs is None:
                unscoped.append(setting)
                continue
            seeds.extend(_scoped_seeds(project, setting, runs))
            where = f"{setting.text} at {project.display(setting.path)}:{setting.line}"
            for call, why in gaps:
                project.unresolved.append((f"{fw.DESCRIPTIONS[framework]} ({where})", call, why))
        if not unscoped:
            continue
        if plan is not None:
            plan.materialise(None if prepared else [_RUNS[name][0] for name in sorted(active) if name in _RUNS])
        setting = best_setting(unscoped, framework)
        assert setting is not None
        where = f"{setting.text} at {project.display(setting.path)}:{setting.line}"
        desc = f"{fw.DESCRIPTIONS[framework]} ({where})"
        enabled = setting.enabled
        if framework in SCOPED or framework in CONFIG_SCOPED:
            # which models this instance runs is not known: every class the framework may
            # run, as maybe enabled
            enabled = Enabled.MAYBE
            for other in unscoped:
                other_where = f"{other.text} at {project.display(other.path)}:{other.line}"
                project.unresolved.append((
                    f"{fw.DESCRIPTIONS[framework]} ({other_where})", other_where,
                    f"the models this {_INSTANCE[framework]} runs could not be followed: a maybe "
                    f"enabled region over every {_MATCHING[framework]}"))

        def seed(path: str, key: str, runner: str, deps: Set[str]) -> None:
            cite = f"{runner} `{key}` under autocast: {where}"
            candidate = Candidate(enabled, setting.device, setting.dtype, desc, cite)
            seeds.append((path, key, candidate, frozenset(deps | {setting.path})))

        if framework in _RUNS:
            test, methods, runner = _RUNS[framework]
            for path in sorted(project.summaries):
                summary = project.summaries[path]
                if summary is None:
                    continue
                for cls in sorted(summary.classes):
                    seen: Set[str] = set()
                    if not any(test(ref) for ref in project.external_bases(path, cls, seen)):
                        continue
                    for method in methods:
                        if method in summary.classes[cls].methods:
                            seed(path, f"{cls}.{method}", runner, seen)
        # models handed to the framework: accelerator.prepare(model), Trainer(model=...)
        kinds = _PREPARED_KINDS.get(framework, ())
        for path in sorted(project.summaries):
            summary = project.summaries[path]
            if summary is None:
                continue
            for kind, ref in summary.prepared:
                if kind not in kinds or (kind == "fabric" and framework != "fabric"):
                    continue
                seen = {path}
                found = project.resolve_ref(path, ref)
                if found is None or len(found[1]) != 1:
                    continue
                hit = project.method(found[0], found[1][0], "forward", seen=seen)
                if hit is not None:
                    seed(hit[0], hit[1], _PREPARED_RUNNER[kind], seen)
    return seeds


def _scoped_seeds(project, setting, runs):
    where = f"{setting.text} at {project.display(setting.path)}:{setting.line}"
    desc = f"{fw.DESCRIPTIONS[setting.framework]} ({where})"
    methods = fw.LIGHTNING_HOOKS if setting.framework == "lightning" else ("forward",)
    runner = _SCOPED_RUNNER[setting.framework]
    seeds = []
    for cpath, cls, source, site, given in runs:
        via = f"{source} -> {cls} in {project.display(cpath)}, given to {given}"
        seeds.extend(_method_seeds(project, setting, cpath, cls, methods, (runner, where, desc, via),
                                   site, f"{source.split(' <- ')[0]} at {site}", {setting.path, cpath}))
    return seeds


def _config_seeds(project, setting):
    """Seeds for the project classes the setting's config builds; None when it names none."""
    scope = config_classes(project, setting)
    test = _RUNS[setting.framework][0]
    classes = [(cpath, cls) for cpath, cls in (named_classes(project, set(scope)) if scope is not None else [])
               if any(test(ref) for ref in project.external_bases(cpath, cls, set()))]
    if not classes:
        return None
    where = f"{setting.text} at {project.display(setting.path)}:{setting.line}"
    desc = f"{fw.DESCRIPTIONS[setting.framework]} ({where})"
    methods = fw.MM_METHODS if setting.framework == "mmengine" else ("forward",)
    runner = _RUNS[setting.framework][2]
    seeds = []
    for cpath, cls in classes:
        via = f"built by the config {project.display(scope[cls])} -> {cls} in {project.display(cpath)}"
        seeds.extend(_method_seeds(project, setting, cpath, cls, methods, (runner, where, desc, via),
                                   "", f"model at {project.display(scope[cls])}",
                                   {setting.path, scope[cls], cpath}))
    return seeds


def _method_seeds(project, setting, cpath: str, cls: str, methods, cited, site: str, reach: str, deps):
    """Seeds for the methods of one class a framework setting runs. `cited`: (the runner, where
    the setting is, the region's description, how the class came to it); `reach`: what
    --show-regions lists as the call; `deps`: the files the seed depends on."""
    runner, where, desc, via = cited
    seeds = []
    for method in methods:
        hit = project.method(cpath, cls, method)
        if hit is None:
            continue
        cite = f"{runner} `{hit[1]}` under autocast: {where}; {via}"
        candidate = Candidate(setting.enabled, setting.device, setting.dtype, desc, cite, site, (cpath, cls))
        seeds.append((hit[0], hit[1], candidate, frozenset(deps | {hit[0]})))
        project.reached.append((desc, reach, f"{hit[1]} in {project.display(hit[0])} ({via})"))
    return seeds


def best_setting(settings, framework: str) -> Optional[Setting]:
    """The most hazardous of the framework's settings (then the first by file, line, text)."""
    found = [s for s in settings if s.framework == framework]
    if not found:
        return None
    return min(found, key=lambda s: hazard_rank(s.enabled, s.device, s.dtype) + (s.path, s.line, s.text))


# a class statement starts a line (after its indentation): a file without one defines no class
_DEFINES_CLASS = re.compile(r"^[\ufeff \t\f]*class\b", re.M)
