"""Optimizer classes that take AMP's gradient scaling over themselves: the class sets
`_step_supports_amp_scaling = True` (in a method, `self._step_supports_amp_scaling = True`, or
in its body), torch's contract for an optimizer whose `step` reads the GradScaler's scale and
inf checks itself, so `GradScaler.step` never calls `unscale_` on it (NVIDIA
DeepLearningExamples BERT's `FusedLAMBAMP`, which also keeps fp32 master weights). Delivered as
EntryScalingOptimizer to the class's own file and every file naming it (AMP103).

Exact or nothing, judged on the project's texts: every store of the attribute anywhere in the
project sets it to `True` (a subclass or an instance turning it off drops every answer), and a
subclass is not assumed to keep it (it is answered only when it sets it itself)."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Sequence, Tuple

from amplint.analysis.facts.amp_scaling import ATTRIBUTE, EntryScalingOptimizer
from amplint.analysis.project.dtype_fields import deliver, module_of

_STORE = re.compile(r"\b%s\s*=(?!=)\s*([^\n#]*)" % ATTRIBUTE)


def scaling_optimizer_entries(project, paths: Sequence[str]) -> Dict[str, Tuple[EntryScalingOptimizer, ...]]:
    texts = {path: project.files.get(path) or "" for path in paths}
    python = [path for path in paths if path.endswith(".py")]
    stores = [(path, m.group(1).strip()) for path in python if ATTRIBUTE in texts[path]
              for m in _STORE.finditer(texts[path])]
    if not stores or any(value != "True" for _, value in stores):
        return {}  # none, or one that sets it otherwise: no answer for any class
    found: Dict[str, List[EntryScalingOptimizer]] = {}
    for path in sorted({path for path, _ in stores}):
        for cls, line in _classes(texts[path]):
            cite = f"`{cls}` sets `{ATTRIBUTE} = True` ({project.display(path)}:{line})"
            deliver(found, texts, python, path, EntryScalingOptimizer(module_of(path), cls, cite))
    return {path: tuple(sorted(set(entries), key=repr)) for path, entries in found.items()}


def _classes(text: str) -> List[Tuple[str, int]]:
    """(class, line of the store) of each module-level class setting the attribute to True."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for node in ast.walk(cls):
            if not isinstance(node, ast.Assign) or not (
                    isinstance(node.value, ast.Constant) and node.value.value is True):
                continue
            if any(_names_attribute(target, cls, node) for target in node.targets):
                out.append((cls.name, node.lineno))
                break
    return out


def _names_attribute(target: ast.expr, cls: ast.ClassDef, node: ast.Assign) -> bool:
    if isinstance(target, ast.Attribute):
        return target.attr == ATTRIBUTE and isinstance(target.value, ast.Name) and target.value.id == "self"
    return isinstance(target, ast.Name) and target.id == ATTRIBUTE and node in cls.body
