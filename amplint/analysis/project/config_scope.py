"""The model a configuration builds, for the mmengine and detectron2 settings (issue 13): an
`AmpOptimWrapper` or `train.amp.enabled = True` runs the model its own config names, not every
model class of the tree.

Read from the config's text, with its bases (`_base_ = [...]`, `_BASE_: ...`, a LazyConfig's
`from .common.models.mask_rcnn_fpn import model`):
- an mm config: every `type=` inside `model = dict(...)` (the detector, its heads, its losses);
- a detectron2 LazyConfig: every `L(Cls)` inside `model = L(GeneralizedRCNN)(...)`, and
  `cfg.MODEL.META_ARCHITECTURE = "..."`;
- a detectron2 YAML: `META_ARCHITECTURE` and every registry `NAME:`.
Returns None where the config names no model: the caller keeps its maybe-enabled region."""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Set, Tuple

from amplint.analysis.project.class_words import files_defining

_MODEL_START = re.compile(r"^model\b[\w.\[\]'\"]*\s*=", re.M)
_MM_TYPE = re.compile(r"\btype\s*=\s*(?:['\"]([\w.:]+)['\"]|([A-Za-z_][\w.]*))")
_LAZY_CALL = re.compile(r"\bL\(\s*([A-Za-z_][\w.]*)\s*\)")
_META_ARCH = re.compile(r"META_ARCHITECTURE\s*[=:]\s*['\"]?(\w+)")
_YAML_NAME = re.compile(r"^\s*NAME:\s*['\"]?(\w+)", re.M)
_BASES = re.compile(r"^_base_\s*=\s*(\[[^\]]*\]|['\"][^'\"]+['\"])", re.M)
_YAML_BASE = re.compile(r"^_BASE_:\s*['\"]?([^'\"\n]+)", re.M)
_IMPORT_MODEL = re.compile(r"^from\s+([.\w]+)\s+import\s+[^\n]*\bmodel\b", re.M)
# a detectron2 LazyConfig's `model = model_zoo.get_config("common/models/mask_rcnn_fpn.py").model`
_ZOO_MODEL = re.compile(r"^model\s*=\s*[\w.]*get_config\(\s*['\"]([^'\"]+\.py)['\"]", re.M)
MAX_BASES = 6


def config_classes(project, setting) -> Optional[Dict[str, str]]:
    """class name -> the config file that names it, for the setting's config; None if none."""
    names: Dict[str, str] = {}
    _collect(project, setting.path, names, [], 0)
    return names or None


def _collect(project, path: str, found: Dict[str, str], read: List[str], depth: int) -> None:
    path = project._norm.get(os.path.normpath(path), path) if path else path
    if depth > MAX_BASES or path in read or path not in project.files:
        return
    read.append(path)
    text = project.files[path]
    names: Set[str] = set()
    if path.endswith((".yaml", ".yml")):
        names.update(_META_ARCH.findall(text))
        names.update(_YAML_NAME.findall(text))
        for base in _YAML_BASE.findall(text):
            _collect(project, _relative(path, base.strip()), found, read, depth + 1)
        _record(found, names, path)
        return
    for start in _MODEL_START.finditer(text):
        statement = _statement(text, start.end())
        names.update(a or b.rsplit(".", 1)[-1] for a, b in _MM_TYPE.findall(statement))
        names.update(ref.rsplit(".", 1)[-1] for ref in _LAZY_CALL.findall(statement))
    names.update(_META_ARCH.findall(text))
    for bases in _BASES.findall(text):
        for base in re.findall(r"['\"]([^'\"]+)['\"]", bases):
            _collect(project, _relative(path, base), found, read, depth + 1)
    for zoo in _ZOO_MODEL.findall(text):  # the model zoo's configs/ folder, in the project
        suffix = "configs/" + zoo.lstrip("/")
        for other in project.python:
            if other.replace(os.sep, "/").endswith("/" + suffix) or other == suffix:
                _collect(project, other, found, read, depth + 1)
                break
    for module in _IMPORT_MODEL.findall(text):  # a LazyConfig's `from ..models.x import model`
        for module_file, rest in project._module_candidates(path, module):
            if not rest:
                _collect(project, module_file, found, read, depth + 1)
                break
    names.discard("dict")
    _record(found, names, path)


def _record(found: Dict[str, str], names: Set[str], path: str) -> None:
    for name in names:
        found.setdefault(name, path)


def _relative(path: str, base: str) -> str:
    """A `_base_` path relative to the config; `mmdet::...` (another package) names no file."""
    if "::" in base:
        return ""
    return os.path.normpath(os.path.join(os.path.dirname(path), base))


def _statement(text: str, start: int) -> str:
    """The text of one assignment's value: up to where its brackets close at the line's end."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "\n" and depth <= 0:
            break
        index += 1
    return text[start:index]


def named_classes(project, names: Set[str]) -> List[Tuple[str, str]]:
    """(file, class) for each project class whose name the config gives."""
    files = files_defining(project, names)
    project.summarise(files)
    found = []
    for path in files:
        summary = project.summaries.get(path)
        for name in sorted(names & set(summary.classes) if summary is not None else ()):
            found.append((path, name))
    return found
