"""Strings that name project classes (issue 26), for the class flow (classvalues.py).

Followed only where the string names a project class exactly:
- Hydra `hydra.utils.instantiate(cfg.model)`: the `_target_: pkg.models.Net` of the YAML
  mappings whose key path ends with the argument's attributes (`cfg.model` -> a `model:`
  mapping, or the top level of a file in a `model/` config group folder), and of Python dict
  literals given under that key (`"model": {"_target_": "pkg.models.Net"}`, `model=dict(_target_=...)`);
- the constructor arguments such a mapping gives as mappings of their own: Hydra's
  `net: {_target_: ...}` beside `_target_`, LightningCLI / jsonargparse's
  `init_args: {net: {class_path: ...}}` under `class_path` bind that parameter of the named
  class's `__init__` (the framework calls it; no call site in the tree does);
- a registry lookup by a configured name, `META_ARCH_REGISTRY.get(cfg.MODEL.META_ARCHITECTURE)`
  (also through a local, `name = cfg.MODEL.META_ARCHITECTURE`): the classes registered in
  that registry whose name a yacs default (`_C.MODEL.META_ARCHITECTURE = "GeneralizedRCNN"`)
  or a YAML (`MODEL: META_ARCHITECTURE: ...`) gives under the same key path.
- a reflective lookup, `getattr(models, "Net")`, `getattr(models, args.arch)` and
  `models.__dict__[args.arch]` with the literal `default=` of the argparse option (or a config
  value of that key).
A string is resolved as a module path of the project (`pkg.models.Net` -> the class `Net` of
pkg/models.py, re-exports followed) and must end at a class. The configs must decide: where
they give several different classes for one call (a `model/` group with two options that
Hydra defaults lists both select, YAMLs naming other META_ARCHITECTUREs than the yacs
default), none is followed. What cannot be decided holds an `("unnamed", call, why)` value:
no class, and the reason, for --show-regions.
Text first: a YAML is read only when it holds `_target_` / `class_path` (or the key asked for).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project.class_words import files_defining
from amplint.analysis.project.frameworks import yaml_keys
from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.string_params import StringParams
from amplint.analysis.project.scan_view import texts_holding

# the most classes a lookup by a key no literal fixes, or one several configs set, stands for
# (as a registry build, classcalls.MAX_REGISTRY_BUILD); a larger set is left unresolved
MAX_SET = 8
INSTANTIATE = frozenset({"hydra.utils.instantiate", "hydra.utils.call"})
TARGET_KEYS = ("_target_", "class_path")
_TARGET_TEXT = re.compile(r"\b(?:_target_|class_path)\b")
_PY_TARGET = re.compile(r"""(?:["']_target_["']\s*:|\b_target_\s*=)\s*["']([\w.]+)["']""")
_WORD_CHAR = re.compile(r"\w")
_PY_KEY = re.compile(r"""["']?(\w+)["']?\s*[:=]\s*$""")
_DEFAULTS_ITEM = re.compile(r"^\s*-\s*(?:override\s+)?/?([\w/]+)\s*:\s*([\w.-]+)\s*(?:#.*)?$", re.M)
_FIRST_ARG = re.compile(r"\(\s*([A-Za-z_][\w.]*)\s*[,)]")


@dataclass
class Node:
    """A mapping that names a class: where it is, its key path and what its string says."""

    path: str
    line: int
    keys: Tuple[str, ...]  # key path inside the file; a group folder's name comes first
    target: str
    kind: str  # "_target_" (Hydra) or "class_path" (jsonargparse)
    children: Dict[str, List["Node"]] = field(default_factory=dict)  # parameter -> mappings


class StringConfigs:
    def __init__(self, project) -> None:
        self.p = project
        self._nodes: Optional[List[Node]] = None
        self._scalars: Dict[Tuple[str, ...], List[Tuple[str, str, int]]] = {}
        self.params = StringParams(project)

    # -- the mappings that name a class ----------------------------------------------------
    def nodes(self) -> List[Node]:
        if self._nodes is None:
            found: List[Node] = []
            for path in sorted(self.p.files):
                if path.endswith((".yaml", ".yml")):
                    text = self.p.files[path]
                    if _TARGET_TEXT.search(text):
                        found.extend(_yaml_nodes(path, text))
            for path, text in texts_holding(self.p, "_target_"):  # (the pass's scan view)
                found.extend(_python_nodes(path, text))
            self._nodes = found
        return self._nodes

    def _resolve(self, node: Node) -> Optional[Tuple[str, str]]:
        """(file, class) the string names exactly, or None."""
        found = self.p.resolve_ref(node.path, node.target) if "." in node.target else None
        if found is None or len(found[1]) != 1:
            return None
        summary = self.p.summary(found[0])
        return (found[0], found[1][0]) if summary is not None and found[1][0] in summary.classes else None

    def _things(self, nodes: List[Node], call: str, cite: str) -> Things:
        out: Things = {}
        outside = []
        for node in nodes:
            hit = self._resolve(node)
            where = f"{node.keys[-1]}: {node.target} at {self.p.display(node.path)}:{node.line}"
            if hit is None:
                outside.append(node.target)
                continue
            out.setdefault(("inst", hit[0], hit[1]), Hold(f"{cite} ({where})"))
        targets = sorted({node.target for node in nodes})
        if len(targets) > 1:
            return {("unnamed", call, several(targets, "the configs name")): Hold(cite)}
        for target in sorted(set(outside)):
            out.setdefault(("ext_inst", target), Hold(cite))
        return out

    def instantiated(self, text: str, cite: str) -> Things:
        """What `hydra.utils.instantiate(cfg.model)` (cited as `text`) makes."""
        match = _FIRST_ARG.search(text)
        parts = tuple(match.group(1).split(".")) if match else ()
        if len(parts) < 2:
            return {("unnamed", text, "it is built by Hydra from a config whose key the call does "
                     "not name (`instantiate(cfg.model)` names `model:`)"): Hold(cite)}
        wanted = parts[1:]
        nodes = [node for node in self.nodes() if node.keys[-len(wanted):] == wanted]
        if not nodes:
            return {("unnamed", text, f"it is built by Hydra from `{'.'.join(parts)}`, but no YAML or "
                     f"dict of the project gives `{'.'.join(wanted)}` a `_target_`"): Hold(cite)}
        selected = self._selected()
        nodes = [node for node in nodes if not _group_file(node) or node.keys[0] not in selected
                 or os.path.splitext(os.path.basename(node.path))[0] in selected[node.keys[0]]]
        return self._things(nodes, text, cite)

    def _selected(self) -> Dict[str, set]:
        """Hydra defaults lists: config group -> the options some YAML selects (`- model: mnist`)."""
        if not hasattr(self, "_selection"):
            self._selection: Dict[str, set] = {}
            for path in self.p.files:
                if path.endswith((".yaml", ".yml")) and "defaults" in self.p.files[path]:
                    for group, option in _DEFAULTS_ITEM.findall(self.p.files[path]):
                        self._selection.setdefault(group.rsplit("/", 1)[-1], set()).add(option)
        return self._selection

    def init_binding(self, cpath: str, cls: str, param: str) -> Things:
        """What the config mappings that name class `cls` of `cpath` give for the `__init__`
        parameter `param` (a mapping that names a class)."""
        out: Things = {}
        for node in self.nodes():
            children = node.children.get(param)
            if children and self._resolve(node) == (cpath, cls):
                found = self._things(children, node.target, f"the config at {self.p.display(node.path)}:{node.line}")
                for thing, hold in found.items():
                    if thing[0] == "inst":
                        out.setdefault(thing, hold)
        return out

    def cli_runs(self, path: str) -> List[Tuple[str, str, str, str, str]]:
        """LightningCLI: the project class a YAML's top-level `model: class_path:` names, as
        framework_scope.Run (the Trainer that YAML configures runs it)."""
        runs = []
        for node in self.nodes():
            hit = self._resolve(node) if node.path == path and node.keys[1:] == ("model",) else None
            if hit is not None and node.kind == "class_path":
                site = f"{self.p.display(path)}:{node.line}"
                runs.append((hit[0], hit[1], f"model: class_path: {node.target}", site,
                             f"LightningCLI's `model:` at {site}"))
        return runs

    # -- configured names (yacs defaults, YAML) ----------------------------------------------
    def scalars(self, keys: Tuple[str, ...]) -> List[Tuple[str, str, int]]:
        """(value, file, line) of every string the project's configs give under the key path
        `keys` (`("MODEL", "META_ARCHITECTURE")`): `_C.MODEL.META_ARCHITECTURE = "X"` in Python,
        `MODEL:\\n  META_ARCHITECTURE: X` in YAML."""
        found = self._scalars.get(keys)
        if found is not None:
            return found
        found = []
        last = keys[-1]
        assign = re.compile(r"\.%s\s*=\s*['\"]([\w.]+)['\"]" % r"\.".join(map(re.escape, keys)))
        for path in sorted(self.p.files):
            text = self.p.files[path]
            if last not in text:
                continue
            if path.endswith((".yaml", ".yml")):
                for key_path, value, line in yaml_keys(text):
                    if key_path[-len(keys):] == keys:
                        found.append((value, path, line))
            elif path in self.p._norm.values() and path.endswith(".py"):
                for match in assign.finditer(text):
                    found.append((match.group(1), path, text.count("\n", 0, match.start()) + 1))
        self._scalars[keys] = found
        return found

    def defaults(self, dest: str) -> List[Tuple[str, str, int]]:
        """(value, file, line) of the literal `default=` of every argparse option whose
        destination is `dest` (`"-a", "--arch", default="resnet18"` for `args.arch`)."""
        option = dest.replace("_", "[-_]")
        pattern = re.compile(r"add_argument\(\s*(?:['\"]-\w['\"]\s*,\s*)?['\"]--%s['\"]" % option
                             + r"[^)]*?\bdefault\s*=\s*['\"]([\w.-]+)['\"]")
        found = []
        for path in self.p.python:
            text = self.p.files[path]
            if "add_argument" in text and dest.split("_")[0] in text:
                for match in pattern.finditer(text):
                    found.append((match.group(1), path, text.count("\n", 0, match.start()) + 1))
        return found

    def registry_get(self, text: str, keys: Optional[Tuple[str, ...]], registered, cite: str) -> Things:
        """`REGISTRY.get(name)` (cited as `text`): the registered classes whose name the configs
        give under `keys`, the attribute path the name is read from. `registered(names)`: the
        (file, class) of those names registered in that registry."""
        if not keys:
            return {("unnamed", text, "it is looked up in a registry by a name that no config key "
                     "gives (`X_REGISTRY.get(cfg.MODEL.NAME)` is followed)"): Hold(cite)}
        values = self.scalars(keys)
        names = {value.rsplit(".", 1)[-1] for value, _, _ in values if value.rsplit(".", 1)[-1].isidentifier()}
        by_name = {cls: (cpath, cls) for cpath, cls in (registered(names) if names else ())}
        out: Things = {}
        for value, path, line in values:
            hit = by_name.get(value.rsplit(".", 1)[-1])
            if hit is not None:
                where = f"{'.'.join(keys)} = {value} at {self.p.display(path)}:{line}"
                out.setdefault(("class", hit[0], hit[1]), Hold(where))
        if len(out) > 1:
            # Several configs, several classes: not followed (round 38 tried the set of them,
            # each cited with its config value: on detectron2 it reached 5 meta-architectures and
            # 52 more files for no finding, taking timm + detectron2 below 30x TorchFix)
            names = sorted(thing[2] for thing in out)
            return {("unnamed", text, several(names, f"the configs give `{'.'.join(keys)}` as")): Hold(cite)}
        if not out:
            why = (f"it is looked up in a registry by `{'.'.join(keys)}`, which "
                   + ("no config of the project gives" if not values else
                      f"the configs give as {', '.join(sorted({v for v, _, _ in values})[:3])}, "
                      "no class registered there"))
            return {("unnamed", text, why): Hold(cite)}
        return out


def string_call(cv, path: str, key: str, thing: tuple, text: str, cite: str) -> Optional[Things]:
    """What a call (cited as `text`) of a callee holding `thing` makes, when a string decides
    it: `hydra.utils.instantiate(cfg.model)`, `REGISTRY.get(cfg.MODEL.NAME)` (a registry of the
    project, or one imported from outside, `detectron2.modeling.META_ARCH_REGISTRY`); else None."""
    if thing[0] == "ext" and thing[1] in INSTANTIATE:
        return cv.strings.instantiated(text, cite)
    if thing[0] == "ext" and thing[1].endswith("_REGISTRY.get"):
        thing = ("regget", ("reg", thing[1][:-4]))
    if thing[0] != "regget":
        return None
    flow = cv._flow(path)
    keys = attr_path(first_arg_text(text), flow.functions.get(key) if flow is not None else None)
    return cv.strings.registry_get(text, keys, lambda names: _registered(cv, path, thing[1], names), cite)


def _registered(cv, where: str, registry: tuple, names) -> List[Tuple[str, str]]:
    """(file, class) of the classes called `names` registered in `registry` (a class flow
    "reg" value) by a module of the top-level package that makes the lookup at `where`
    (importing that package registers them; detectron2's `projects/TensorMask` or a test
    registers its class only when its own code is imported). Only files defining such a
    class are read."""
    package = _package_root(cv.p, where)
    files = files_defining(cv.p, names)
    imported = _imported_beside(cv.p, package, {_package_root(cv.p, path) for path in files} - {package})
    files = [path for path in files if _package_root(cv.p, path) in imported | {package}]
    cv.p.summarise(files)
    found = []
    for path in files:
        flow = cv._flow(path)
        for value, cls in (flow.registrations if flow is not None else ()):
            if cls in names and registry in cv.registries.keys(path, value):
                found.append((path, cls))
    return found


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)


def _imported_beside(project, package: str, others) -> set:
    """The package folders among `others` that every file importing the package `package`
    (outside it and outside `others`) imports too (detectron2's projects/X/train_net.py:
    `from detectron2.modeling import build_model` and `import maskedattn`, which registers its
    classes): a class registered there is registered wherever the lookup runs. One script
    that imports `package` alone (tools/plain_train_net.py) keeps them out."""
    others = set(others)
    if not others:
        return set()
    memo = project.__dict__.setdefault("_import_roots", {})  # file -> the package folders it imports
    found = None
    for path in project.python:
        roots = memo.get(path)
        if roots is None:
            roots = memo[path] = set()
            for match in _IMPORT.finditer(project.files[path]):
                module = match.group(1) or match.group(2)
                if module.startswith("."):
                    continue
                # a module file of the project is what resolve_ref answers first, unread
                files = project._index.get(module)
                if files:
                    roots.add(_package_root(project, files[0] if len(files) == 1 else project._closest(files, path)))
                    continue
                hit = project.resolve_ref(path, module)
                if hit is not None and not hit[1]:
                    roots.add(_package_root(project, hit[0]))
        if package in roots and _package_root(project, path) not in others | {package}:
            found = roots & others if found is None else found & roots
    return found or set()


def attr_path(arg: Optional[str], function) -> Optional[Tuple[str, ...]]:
    """The config key path a name is read from, given the argument's text: `cfg.MODEL.NAME` or
    `self.cfg.MODEL.NAME` -> ("MODEL", "NAME"), also through one local assignment
    (`meta_arch = cfg.MODEL.META_ARCHITECTURE`)."""
    if not arg:
        return None
    parts = arg.split(".")
    if len(parts) == 1:
        assigned = function.assigns.get(arg, ()) if function is not None else ()
        if len(assigned) != 1:
            return None
        keys: List[str] = []
        val = assigned[0]
        while val is not None and val[0] == "attr":
            keys.append(val[2])
            val = val[1]
        if val is None or val[0] not in ("local", "self") or not keys:
            return None
        parts = ["cfg"] + list(reversed(keys))
    keys_ = parts[2:] if parts[0] == "self" else parts[1:]
    return tuple(keys_) or None


def first_arg_text(text: str) -> Optional[str]:
    match = _FIRST_ARG.search(text)
    return match.group(1) if match else None


def _yaml_nodes(path: str, text: str) -> List[Node]:
    group = os.path.basename(os.path.dirname(path))
    by_keys: Dict[Tuple[str, ...], Node] = {}
    for keys, value, line in yaml_keys(text):
        if keys[-1] in TARGET_KEYS and keys[:-1] not in by_keys:
            by_keys[keys[:-1]] = Node(path, line, (group,) + keys[:-1], value, keys[-1])
    for mapping, node in by_keys.items():
        if not mapping:
            continue
        # Hydra gives the arguments beside `_target_`, jsonargparse under `init_args`
        parent = by_keys.get(mapping[:-1])
        if parent is None or parent.kind != "_target_":
            parent = by_keys.get(mapping[:-2]) if mapping[-2:-1] == ("init_args",) else None
            if parent is not None and parent.kind != "class_path":
                parent = None
        if parent is not None:
            parent.children.setdefault(mapping[-1], []).append(node)
    return list(by_keys.values())


def _python_nodes(path: str, text: str) -> List[Node]:
    """`"model": {"_target_": "pkg.Net"}`, `model = {"_target_": ...}`, `model=dict(_target_=...)`."""
    found = []
    for match in _py_targets(text):
        brace, call = text.rfind("{", 0, match.start()), text.rfind("dict(", 0, match.start())
        start = max(brace, call)
        key = _PY_KEY.search(text, max(0, start - 80), start) if start >= 0 else None
        if key is not None:
            line = text.count("\n", 0, match.start()) + 1
            found.append(Node(path, line, (key.group(1),), match.group(1), "_target_"))
    return found


# `_PY_TARGET`'s two forms, each matched where `_target_` is written (the pattern, whose second
# form starts with `\b`, was tried at every position of every file holding the word)
_PY_TARGET_QUOTED = re.compile(r"""["']_target_["']\s*:\s*["']([\w.]+)["']""")
_PY_TARGET_KEYWORD = re.compile(r"""_target_\s*=\s*["']([\w.]+)["']""")


def _py_targets(text: str):
    """The matches `_PY_TARGET.finditer(text)` gives, in order."""
    found = []
    end = 0
    at = text.find("_target_")
    while at != -1:
        match = None
        if at - 1 >= end and at and text[at - 1] in "\"'":
            match = _PY_TARGET_QUOTED.match(text, at - 1)
        if match is None and at >= end and (not at or not _WORD_CHAR.match(text, at - 1)):
            match = _PY_TARGET_KEYWORD.match(text, at)
        if match is not None:
            found.append(match)
            end = match.end()
        at = text.find("_target_", at + 1)
    return found


def several(names: List[str], what: str) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"{what} {len(names)} different classes ({shown}): which one this call makes, no file decides"


def _group_file(node: Node) -> bool:
    """A mapping at the top of a file in a Hydra config-group folder (configs/model/mnist.yaml)."""
    return node.path.endswith((".yaml", ".yml")) and len(node.keys) == 1 and (
        node.keys[0] == os.path.basename(os.path.dirname(node.path)))


def _package_root(project, path: str) -> str:
    """The folder of the outermost package holding `path` (its own folder outside a package)."""
    folder = os.path.dirname(os.path.normpath(path))
    while os.path.join(folder, "__init__.py") in project._norm and os.path.dirname(folder) != folder:
        parent = os.path.dirname(folder)
        if os.path.join(parent, "__init__.py") not in project._norm:
            break
        folder = parent
    return folder
