"""`amplint --show-regions`: each autocast region the project pass found, the functions it
reaches in other files (with the class-flow chain where one was needed), and the calls under it
that could not be resolved, with the `autocast-modules` line that would cover the gap: the
files holding the classes whose method the unresolved call runs (`forward` for `model(x)`,
`loss` for `head.loss(...)`), less those the region already reaches."""

from __future__ import annotations

import json
import re
from typing import Dict, List, Sequence, Set

from amplint.workspace.config import Config
from amplint.analysis.facts.regions import Enabled
from amplint.workspace.files import discover
from amplint.analysis.project import build
from amplint.analysis.project.scaler_resolution import scaler_entries, text_may_hold
from amplint.analysis.project.scaler_summaries import local_summaries
from amplint.run.project_cache import config_files
from amplint.run.project_inputs import _KeyedLazy, _LazyTexts
from amplint.run.scaler_report import uncomposed

_CLASS_HEAD = re.compile(r"^class (\w+)\b", re.M)
_NOT_SPECIFIC = 5  # more candidate files than this: the call could run nearly any model code
_DECLARE = (
    "if they run model code under autocast, annotate the parameter with its class "
    "(`def train(model: Net)`) or add this line to [tool.amplint] in pyproject.toml, with the "
    'files that really run under autocast: autocast-modules = ["path/to/models/**"]'
)
_AT = re.compile(r" at (\S+):(\d+)(?:\b|$)")


def _place(text: str):
    """Sort key in file/line order: the `at path:line` a region or call is cited with."""
    found = _AT.search(text)
    return (found.group(1), int(found.group(2)), text) if found else ("~", 0, text)


def show_regions(paths: Sequence[str], config: Config, excludes, output_format: str = "text") -> str:
    files, errors = discover(paths, False, excludes)
    keys = [f for f in files if f.endswith((".py", ".pyi"))] + config_files(paths)
    texts = _LazyTexts()
    project = build(_KeyedLazy(keys, texts), config=config)
    regions: Dict[str, dict] = {}

    def region(desc: str) -> dict:
        return regions.setdefault(desc, {"region": desc, "reaches": [], "through": [], "unresolved": []})

    enabled = _region_states(project)
    for desc in enabled:
        region(desc)
    for desc, reached in project.region_reach.items():
        region(desc)["reaches"] = sorted(set(reached))
    for desc, call, target in project.reached:
        region(desc)["through"].append({"call": call, "reaches": target})
    classes = _ClassIndex(keys, texts, project)
    hinted, unspecific = set(), 0
    for desc, call, why in project.unresolved:
        could_run = [] if why.startswith("it comes from") else classes.could_run(call, region(desc)["reaches"])
        if len(could_run) > _NOT_SPECIFIC:
            could_run = []
        if could_run:
            hinted.update(path for path, _ in could_run)
        elif not why.startswith("it comes from"):
            unspecific += 1
        region(desc)["unresolved"].append({
            "call": call, "why": why, "could_run": [f"{cls} in {path}" for path, cls in could_run],
        })
    for desc, item in regions.items():
        item["enabled"] = enabled.get(desc, "true")
    suggestion = None
    if hinted:
        suggestion = "autocast-modules = [" + ", ".join(f'"{path}"' for path in sorted(hinted)) + "]"
    declare = _DECLARE if unspecific else None
    for item in regions.values():
        item["unresolved"].sort(key=lambda gap: _place(gap["call"]))
        item["through"].sort(key=lambda step: _place(step["call"]))
    ordered = [regions[desc] for desc in sorted(regions, key=_place)]
    composed: Set[tuple] = set()  # calls the protocol summaries followed into another file
    scaler_entries(project, keys, lambda wanted, force: local_summaries(texts, wanted, force),
                   composed, may_hold=text_may_hold(texts))
    gaps = uncomposed(keys, lambda key: texts[key], project.display, composed)
    if output_format == "json":
        return json.dumps({"regions": ordered, "autocast_modules": suggestion, "declare": declare,
                           "scaler_uncomposed": gaps, "errors": errors}, indent=2) + "\n"
    lines: List[str] = []
    for item in ordered:
        lines.append(item["region"] + _state_note(item))
        for target in item["reaches"]:
            lines.append(f"  reaches {target}")
        for step in item["through"]:
            lines.append(f"  {step['call']} -> {step['reaches']}")
        for gap in item["unresolved"]:
            could = f" (could run {', '.join(gap['could_run'])})" if gap["could_run"] else ""
            lines.append(f"  unresolved: {gap['call']}: {gap['why']}{could}")
        if not item["reaches"] and not item["through"] and not item["unresolved"]:
            lines.append("  reaches nothing outside this file")
    if not ordered:
        lines.append("No autocast region reaches code in other files.")
    if suggestion:
        lines.append("")
        lines.append("If the unresolved calls above really run that model code under autocast, add "
                     f"this line to [tool.amplint] in pyproject.toml: {suggestion}")
    if declare:
        calls = "call" if unspecific == 1 else "calls"
        lines.append("")
        lines.append(f"amplint cannot tell which classes {unspecific} unresolved {calls} above "
                     f"run; {declare}")
    if gaps:
        lines.append("")
        lines.append("GradScaler protocol: calls not composed (the AMP12x rules do not see the "
                     "scaler events behind them):")
        lines.extend(f"  {gap['call']} in {gap['in']}: {gap['why']}" for gap in gaps)
    lines.extend(f"error: {error}" for error in errors)
    return "\n".join(lines) + "\n"


def _state_note(item: dict) -> str:
    if item["enabled"] == "false":
        return " (disabled)"
    if item["enabled"] != "maybe":
        return ""
    if item["region"].startswith("the autocast decorator"):
        return (" (maybe enabled: mmcv's @auto_fp16 casts only once the module's fp16_enabled is "
                "set; an `enabled=` argument is only known at run time)")
    return " (maybe enabled)"


def _region_states(project) -> Dict[str, str]:
    """Every region the first-pass files open (listed even when it reaches nothing), with
    whether it is enabled: "true", "maybe" (mmcv's @auto_fp16, `enabled=flag`) or "false"."""
    states: Dict[str, str] = {}
    for path in project.first_pass:
        summary = project.summaries.get(path)
        if summary is None:
            continue
        infos = list(summary.regions) + list(summary.region_infos) + [info for _, info in summary.roots]
        for info in infos:
            desc = f"{info.origin.what} at {project.display(info.origin.path)}:{info.origin.line}"
            states[desc] = {Enabled.TRUE: "true", Enabled.FALSE: "false"}.get(info.enabled, "maybe")
    return states


class _ClassIndex:
    """The classes of the linted files by the methods they define (read from the text)."""

    def __init__(self, keys, texts, project) -> None:
        self.keys = [key for key in keys if key.endswith(".py")]
        self.texts = texts
        self.project = project
        self._methods: Dict[str, List[tuple]] = {}

    def could_run(self, call: str, reaches: List[str]) -> List[tuple]:
        """(file, "Class.method") for each class whose method the call may run, less those the
        region already reaches."""
        method = _called_method(call.rsplit(" at ", 1)[0])
        found = []
        for path, cls in self._defining(method):
            name = f"{cls}.{method}"
            if f"{name} in {path}" not in reaches:
                found.append((path, name))
        return found

    def _defining(self, method: str) -> List[tuple]:
        if method not in self._methods:
            pattern = re.compile(rf"^[ \t]+def {re.escape(method)}\(\s*self\b", re.M)
            found = []
            for key in self.keys:
                text = self.texts[key]
                if f"def {method}(" not in text:
                    continue
                heads = list(_CLASS_HEAD.finditer(text))
                for index, head in enumerate(heads):
                    end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
                    if pattern.search(text, head.end(), end):
                        found.append((self.project.display(key), head.group(1)))
            self._methods[method] = found
        return self._methods[method]


def _called_method(text: str) -> str:
    """`model` -> forward, `head.loss` -> loss, `self.model.inference` -> inference,
    `self.convs[...]` -> forward (`self.x` is the held module, not a method)."""
    text = text.split(" (in lambda ")[0]
    if text.endswith("]"):
        return "forward"
    parts = text.split(".")
    if parts[0] == "self":
        parts = parts[1:]
    return parts[-1] if len(parts) > 1 else "forward"
