"""`amplint --show-regions`: each autocast region the project pass found, the functions it
reaches in other files (with the class-flow chain where one was needed), and the calls under it
that could not be resolved, with the `autocast-modules` line that would cover the gap."""

from __future__ import annotations

import json
import os
import re
from typing import Dict, List, Sequence

from amplint.config import Config
from amplint.files import discover
from amplint.project import build
from amplint.project_inputs import _KeyedLazy, _LazyTexts, _config_files

_MODULE_CLASS = re.compile(r"^\s+def forward\(", re.M)
_CLASS = re.compile(r"^class (\w+)\(", re.M)


def show_regions(paths: Sequence[str], config: Config, excludes, output_format: str = "text") -> str:
    files, errors = discover(paths, False, excludes)
    keys = [f for f in files if f.endswith((".py", ".pyi"))] + _config_files(paths)
    texts = _LazyTexts()
    project = build(_KeyedLazy(keys, texts), config=config)
    regions: Dict[str, dict] = {}

    def region(desc: str) -> dict:
        return regions.setdefault(desc, {"region": desc, "reaches": [], "through": [], "unresolved": []})

    for desc, reached in project.region_reach.items():
        region(desc)["reaches"] = sorted(set(reached))
    for desc, call, target in project.reached:
        region(desc)["through"].append({"call": call, "reaches": target})
    for desc, call, why in project.unresolved:
        region(desc)["unresolved"].append({"call": call, "why": why})
    suggestion = None
    if project.unresolved:
        reached = {item for found in project.region_reach.values() for item in found}
        folders = set()
        for path in keys:
            text = texts[path] if path.endswith(".py") else ""
            if _MODULE_CLASS.search(text) or "nn.Module" in text:
                shown = project.display(path)
                # a module class of the file that no region reaches (`head.loss` on an
                # untyped parameter may run SegHead.loss, next to a reached Net)
                seen = {item.split(".")[0] for item in reached if item.endswith(f" in {shown}")}
                if set(_CLASS.findall(text)) - seen:
                    folders.add(shown.split("/")[0] if "/" in shown else shown)
        if folders:
            globs = ", ".join(f'"{f}/**"' if not f.endswith(".py") else f'"{f}"' for f in sorted(folders))
            suggestion = f"autocast-modules = [{globs}]"
    ordered = [regions[desc] for desc in sorted(regions)]
    if output_format == "json":
        return json.dumps({"regions": ordered, "autocast_modules": suggestion, "errors": errors}, indent=2) + "\n"
    lines: List[str] = []
    for item in ordered:
        lines.append(item["region"])
        for target in item["reaches"]:
            lines.append(f"  reaches {target}")
        for step in item["through"]:
            lines.append(f"  {step['call']} -> {step['reaches']}")
        for gap in item["unresolved"]:
            lines.append(f"  unresolved: {gap['call']}: {gap['why']}")
    if not ordered:
        lines.append("No autocast region reaches code in other files.")
    if suggestion:
        lines.append("")
        lines.append("To treat the model code of the unresolved calls as running under autocast, add to")
        lines.append(f"[tool.amplint] in pyproject.toml (only if it really does): {suggestion}")
    lines.extend(f"error: {error}" for error in errors)
    return "\n".join(lines) + "\n"
