"""The project pass: regions that other files or framework settings put around this file's code.

    project = amplint.analysis.project.build(files, settings)   # path -> source text
    project.entries_for(path)       # EntryRegions for lint_source(..., entries=...)
    project.dependencies(path)      # the files whose content decided those entries
    amplint.analysis.project.lint_project(files, settings, fix=False) -> {path: FileResult}

First pass (cheap): only files whose text can open an autocast region or hold a framework
setting are parsed and summarised (summary.py); the files a region then reaches, and the files
that may define framework-run classes (frameworks.py), are summarised on demand. Each file is
parsed at most once in this pass. Regions then propagate over the summaries to a fixpoint:
`with torch.autocast("cuda"): loss = crit(out, y)` in train.py, where `crit = FocalLoss()` comes
from losses.py, makes `FocalLoss.forward` run under that region, and through it whatever
`forward` calls in other files. The result does not depend on the order of the files: each
function keeps the most hazardous region that reaches it (enabled before maybe, CUDA before
unknown before CPU, float16 before unknown before bfloat16, then the citation's text).

This module orchestrates; the parts: summary.py (one file's facts), resolve.py (references to
files, methods, bases), classflow.py / flowfacts.py (values a function holds), region_seeds.py,
framework_seeds.py and declared.py (where regions start), propagate.py (the fixpoint),
candidates.py (the hazard order and citations), explain.py (the `--explain` text).
"""

from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from amplint.analysis.facts.region_entries import EntryRegion
from amplint.analysis.project import frameworks as fw
from amplint.analysis.project.classflow import ClassFlow
from amplint.analysis.project.declared import declared_matches, declared_seeds
from amplint.analysis.project.context_attrs import attr_region_seeds
from amplint.analysis.project.context_methods import method_region_seeds
from amplint.analysis.project.context_openers import opener_region_seeds
from amplint.analysis.project.context_params import param_region_seeds
from amplint.analysis.project.device_params import param_device_entries
from amplint.analysis.project.escape_args import escape_arg_entries
from amplint.analysis.project.region_args import region_arg_entries
from amplint.analysis.project.escape_returns import escape_return_entries
from amplint.analysis.project.module_outputs import forward_call_entries, module_output_entries
from amplint.analysis.project.property_entries import params_dtype_entries
from amplint.analysis.project.class_dtype_entries import class_dtype_entries
from amplint.analysis.project.backward_entries import backward_method_entries
from amplint.analysis.project.backward_receivers import backward_receiver_entries
from amplint.analysis.project.dispatch import Dispatch, dispatch_seeds
from amplint.analysis.project.explain import EXPLAIN
from amplint.analysis.project.framework_seeds import framework_seeds
from amplint.analysis.project.openworld import OpenWorld
from amplint.analysis.project.bound_flow import bound_value_entries
from amplint.analysis.project.pointsto_reach import ValueFlow, scope as value_scope
from amplint.analysis.project.propagate import propagate
from amplint.analysis.project.value_seeds import value_seeds
from amplint.analysis.project.region_seeds import call_seeds, flow_seeds
from amplint.analysis.project.resolve import ProjectResolver
from amplint.analysis.project.scaler_resolution import scaler_entries, text_keys_of, text_may_hold
from amplint.analysis.project.scaler_summaries import local_summaries
from amplint.analysis.project.summary import (
    CALLER_TEXT, CALLER_WORDS, ModuleSummary, Setting, summarize,
)

__all__ = ["ProjectFacts", "build", "lint_project", "declared_matches", "EXPLAIN"]

OPEN_WORLD_DEFAULT = False  # `open-world` in [tool.amplint]; see README "Whole-project analysis"


# paths -> their summaries (None: the file could not be summarised)
SummarizeMany = Callable[[List[str]], Mapping[str, Optional[ModuleSummary]]]
# paths -> their summaries' `flow.registrations` (None: summarise the file to know)
RegistrationsMany = Callable[[List[str]], Mapping[str, Optional[list]]]


def needs_summary(text: str) -> bool:
    """The first pass's text test: can this file open a region or hold a framework setting?
    Plain substring tests first (each pattern's literal part): a regex starting with a class
    (`(?:fp|bf)16`) scans every position of every file, several times the cost (issue 34)."""
    return bool(
        (any(word in text for word in CALLER_WORDS) and CALLER_TEXT.search(text))
        or (any(word in text for word in fw.SETTING_WORDS) and fw.SETTING_TEXT.search(text))
    )


def _is_python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _is_yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


class ProjectFacts(ProjectResolver):
    def __init__(
        self, files: Mapping[str, str],
        declared: Optional[Tuple[Sequence[str], Optional[str], Optional[str], Optional[str]]] = None,
        keep_modules: bool = False,
        summaries: Optional[Mapping[str, Optional[ModuleSummary]]] = None,
        summarize_many: Optional[SummarizeMany] = None,
        value_flow: bool = False,
        open_world: bool = False,
        registrations_many: Optional[RegistrationsMany] = None,
    ) -> None:
        """`summaries`: the first pass already done elsewhere (the runner's workers summarise
        the files they lint, from the same parse); `files` may then be a lazy mapping, read
        only for the files a region reaches. `summarize_many(paths)`: where the summaries this
        pass asks for later come from (the runner's pool and cache); by default they are made
        here, one by one. `registrations_many(paths)`: where the registrations of files not
        summarised come from (ast_registrations.py; the runner's pool and cache)."""
        self._summarize_many = summarize_many
        self._registrations_many = registrations_many
        self.files = files if summaries is not None else dict(files)
        self._given = dict(summaries) if summaries is not None else None
        self._norm = {os.path.normpath(p): p for p in self.files}
        self.python = sorted(p for p in self.files if _is_python(p))
        dirs = [os.path.dirname(os.path.abspath(p)) for p in self.files]
        self.root = os.path.commonpath(dirs) if dirs else os.getcwd()
        self._shown: Dict[str, str] = {}
        self.summaries: Dict[str, Optional[ModuleSummary]] = {}
        self.first_pass: List[str] = []  # files the text test sent to the parser
        # files a framework's text test chose but that define no class, left unparsed until
        # something asks for them; the class flow's parse budget counts them as summarised
        self.deferred: Set[str] = set()
        self.seed_plan = None  # the framework seeds' planned files (seed_files.py), worked out lazily
        # past the last loop over every summary made (framework seeds, the points-to scope):
        # resolve.py may then read a package's `__init__.py` for a re-export without a summary
        # (reexports.py); those files, which the summaries' readers take as summarised
        self.summaries_looped = False
        self.reexport_read: Set[str] = set()
        self._index = self._module_index()
        self._entries: Dict[str, Tuple[EntryRegion, ...]] = {}
        self.flow = ClassFlow(self)
        self.dispatch = Dispatch(self)
        # --show-regions: what each region reaches through the class flow, and what it cannot
        self.reached: List[Tuple[str, str, str]] = []  # (region, call, "Net.forward in models/net.py")
        self.unresolved: List[Tuple[str, str, str]] = []  # (region, call at file:line, why)
        self.region_reach: Dict[str, List[str]] = {}  # region -> "Net.forward in models/net.py"
        self._deps: Dict[str, Set[str]] = {}
        self.settings: List[Setting] = []
        self._declared = declared
        # the parsed modules of the summarised files, for a lint pass that can take them
        self.keep_modules = keep_modules
        self.modules: Dict[str, object] = {}
        self.value_flow = value_flow
        self.values: Optional[ValueFlow] = None
        # a region's call on a parameter nothing in the tree binds: a MAYBE over the classes
        # that fit (openworld.py)
        self.open_world: Optional[OpenWorld] = OpenWorld(self) if open_world else None
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

    def made_summary(self, path: str) -> Optional[ModuleSummary]:
        """The file's summary if it is made, or if resolve.py read its re-exports in its place
        (made now: a reader of the summaries made so far sees those it saw before); else None."""
        if path in self.reexport_read:
            return self.summary(path)
        return self.summaries.get(path)

    def is_deferred(self, path: str) -> bool:
        """Does the class flow's parse budget count this file as summarised (a deferred file,
        or one the framework seeds planned)?"""
        return path in self.deferred or (self.seed_plan is not None and self.seed_plan.holds(path))

    def planned_summary(self, path: str) -> Optional[ModuleSummary]:
        """The file's summary if it is made, or if the framework seeds' plan makes it when
        worked out (seed_files.py); else None."""
        if path not in self.summaries and self.seed_plan is not None and self.seed_plan.summarises(path):
            self.summarise([path])
        return self.summaries.get(path)

    def registrations_of(self, paths: List[str]) -> Dict[str, Optional[list]]:
        """path -> what its summary's `flow.registrations` holds, for files not summarised
        (None: not known without the summary)."""
        if self._registrations_many is not None:
            return dict(self._registrations_many(paths))
        from amplint.analysis.project.ast_registrations import ast_registrations

        return {path: ast_registrations(path, self.files[path]) for path in paths}

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
        seeds = call_seeds(self)
        seeds.extend(flow_seeds(self))
        seeds.extend(framework_seeds(self))
        self.summaries_looped = not self.value_flow
        seeds.extend(declared_seeds(self, self._declared))
        seeds.extend(dispatch_seeds(self))
        seeds.extend(param_region_seeds(self))
        seeds.extend(opener_region_seeds(self))
        seeds.extend(method_region_seeds(self))
        seeds.extend(attr_region_seeds(self))
        reach = propagate(self, seeds)
        if self.value_flow:
            if self.seed_plan is not None:
                self.seed_plan.files  # the plan summarises what its index cannot read, as it did
            self.flow.summarise_owed()  # the points-to scope reads every summary made
        if self.value_flow and (reach.entries or any(s is not None and s.regions for s in self.summaries.values())):
            # the points-to resolver over the files this pass touched answers the calls the
            # class flow could not (pointsto_reach.py); then the regions propagate again
            try:
                scope = value_scope(self, reach.entries)
                self.summaries_looped = True
                self.values = ValueFlow(self, scope)
            except (RecursionError, MemoryError):  # the resolver's limits: the class flow's answer stands
                self.values = None
            else:
                reach = propagate(self, seeds + value_seeds(self, seeds))
        self.summaries_looped = True
        self._entries = reach.entries
        self._deps = reach.deps
        param_device_entries(self)
        bound_value_entries(self, reach.entries)
        module_output_entries(self)
        forward_call_entries(self)  # AMP101's, to a calling function that writes a factory's buffer
        escape_return_entries(self)  # reads the module outputs: `return model.encoder(x)`
        # the module outputs stay in the pass otherwise (escape_args reads them): handed to every
        # calling file, they would have every region file that calls a project module linted twice
        escape_arg_entries(self)
        region_arg_entries(self)  # half values passed under a region (shares escape_args' walks)
        params_dtype_entries(self, set(self._entries) | set(self.first_pass))
        class_dtype_entries(self, set(self._entries) | set(self.first_pass))
        backward_receiver_entries(self, backward_method_entries(self))  # then `accumulator.backward(loss)`
        # calls the class flow resolved, with a fact the rule asks (nograd_entries.py,
        # wrapper_entries.py), and regions opened through a parameter (context_params.py) or a
        # context-manager function of another file (context_openers.py), and parameters that
        # callers bind to a torch.device used as an autocast's device type (device_params.py),
        # properties a class inherits from another file (property_entries.py), class attributes
        # read as a dtype through the classes that can be self (class_dtype_entries.py), values
        # returned out of a region to callers in other files (escape_returns.py) or passed out of
        # one to functions of other files (escape_args.py)
        for found, deps in (("nograd_calls", "nograd_deps"), ("wrapped_calls", "wrapped_deps"),
                            ("param_regions", "param_deps"), ("opener_regions", "opener_deps"),
                            ("device_params", "device_deps"), ("property_dtypes", "property_deps"),
                            ("bound_values", "bound_deps"),
                            ("class_dtypes", "class_dtype_deps"),
                            ("backward_calls", "backward_deps"), ("attr_regions", "attr_deps"),
                            ("escape_returns", "escape_return_deps"), ("escape_args", "escape_arg_deps"),
                            ("region_args", "region_arg_deps"), ("forward_calls", "forward_call_deps")):
            for path, calls in self.__dict__.get(found, {}).items():
                self._entries[path] = tuple(self._entries.get(path, ())) + tuple(sorted(calls, key=repr))
                self._deps.setdefault(path, set()).update(self.__dict__[deps][path])
        self.region_reach = reach.region_reach
        for summary in self.summaries.values():
            if summary is not None:
                summary.release()


def parse_or_none(source: str):
    from amplint.analysis.engine import parse
    import libcst as cst

    try:
        return parse(source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError, TypeError):
        return None  # the lint pass reports it


def build(
    files: Mapping[str, str], settings=None, config=None, declared=None, keep_modules=False,
    summaries=None, summarize_many: Optional[SummarizeMany] = None, value_flow: Optional[bool] = None,
    open_world: Optional[bool] = None, registrations_many: Optional[RegistrationsMany] = None,
) -> ProjectFacts:
    """The project facts for these files (path -> source text; YAML configuration files may be
    included for framework settings). `declared`: (globs, device, dtype, base folder) for
    code declared to run under autocast; by default read from `config.autocast_modules`,
    `config.autocast_device` ("cuda"), `config.autocast_dtype` ("float16"), relative to the
    folder of `config.path`. `value_flow`: let the points-to resolver answer the calls the class
    flow cannot (pointsto_reach.py); by default `config.value_flow` (`value-flow`, false).
    `open_world`: a region's call on a parameter no call site binds runs the methods of the (at
    most 3) project classes that fit its uses (openworld.py); by default `config.open_world`."""
    if declared is None and config is not None and getattr(config, "autocast_modules", None):
        path = getattr(config, "path", None)
        declared = (
            tuple(config.autocast_modules),
            getattr(config, "autocast_device", None) or "cuda",
            getattr(config, "autocast_dtype", None) or "float16",
            os.path.dirname(os.path.abspath(path)) if path else None,
        )
    value_flow = bool(getattr(config, "value_flow", False)) if value_flow is None else value_flow
    if open_world is None:
        open_world = bool(getattr(config, "open_world", OPEN_WORLD_DEFAULT))
    return ProjectFacts(files, declared, keep_modules, summaries, summarize_many, value_flow, open_world,
                        registrations_many)


def lint_project(files: Mapping[str, str], settings, fix: bool = False, config=None, declared=None):
    """build + engine.lint_source for every Python file, with the entries the project found."""
    import inspect

    from amplint.analysis.engine import chain_duplicates, lint_source
    from amplint.analysis.project.imported import imported_entries

    # Reuse the first pass's parse where the engine can take it (`lint_source(..., module=)`).
    reuse = "module" in inspect.signature(lint_source).parameters
    project = build(files, settings, config, declared, keep_modules=reuse)
    remote = scaler_entries(project, sorted(files), lambda wanted, force: local_summaries(
        files, wanted, force, project.modules), may_hold=text_may_hold(files), keys_of=text_keys_of(files))
    functions = imported_entries(project, sorted(files), remote)
    results = {}
    for path in sorted(files):
        if not _is_python(path):
            continue
        extra = {"module": project.modules.pop(path)} if reuse and path in project.modules else {}
        results[path] = lint_source(
            path, files[path], settings, fix=fix,
            entries=tuple(project.entries_for(path)) + remote.get(path, ()) + functions.get(path, ()),
            **extra
        )
    # one report per hazard: a finding at a call drops when its event is reported in the callee
    dropped = chain_duplicates(results.values())
    for result in results.values():
        result.diagnostics = [d for d in result.diagnostics if id(d) not in dropped]
    return results
