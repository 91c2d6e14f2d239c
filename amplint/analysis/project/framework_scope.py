"""The models one framework setting runs, found with the class flow: the instance the setting
builds (`trainer = Trainer(precision="16-mixed")`, `self.fabric = Fabric(precision=16)`,
`args = TrainingArguments(fp16=True)`) and what that instance is given to run:

- Lightning `trainer.fit(model)` (also `validate`, `test`, `predict`, `Trainer(...).fit(m)`);
- Fabric `fabric.setup(model, optimizer)` / `fabric.setup_module(model)`;
- accelerate `accelerator.prepare(model, optimizer, loader)` / `prepare_model(model)`;
- Hugging Face `Trainer(model=model, args=args)`.

A YAML's `trainer: precision:` runs the model the same YAML names: LightningCLI's
`model: class_path:`, or a LightningModule by the name its register decorator gives it
(threestudio's `system_type: "dreamfusion-system"`, registered_names.py).

The model argument is followed by the class flow (constructors, factories, registries,
parameters, annotations...). A setting whose instance or models cannot be followed is
*unresolved*: the caller keeps a maybe-enabled region over every class that framework may run
and says so in --show-regions. Nothing is guessed.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from amplint.analysis.project.flowindex import thing_order
from amplint.analysis.project.frameworks import is_lightning_module, yaml_keys
from amplint.analysis.project.registered_names import registered_classes

_RUN_METHODS = {
    "lightning": ("fit", "validate", "test", "predict"),
    "fabric": ("setup", "setup_module"),
    "accelerate": ("prepare", "prepare_model"),
}
# the setting's callee, as the class flow records it (last name of the reference)
_BUILDERS = {"lightning": ("Trainer",), "fabric": ("Fabric",), "accelerate": ("Accelerator",),
             "huggingface": ("TrainingArguments", "Config")}
SCOPED = frozenset(_BUILDERS)

# (file, class, "model <- LitNet() at main.py:9", "main.py:12", "fit() at main.py:12")
Run = Tuple[str, str, str, str, str]


def scoped_runs(project, setting, gaps: Optional[list] = None) -> Optional[List[Run]]:
    """The project classes the setting's framework instance runs; None when unresolved.
    `gaps` receives (model at file:line, why) for a model argument that holds no project class
    while others do (accelerate's optimizers and loaders are not models: not gaps)."""
    if setting.framework == "lightning" and setting.path.endswith((".yaml", ".yml")):
        # LightningCLI's `model: class_path:`, else a LightningModule the YAML names by the
        # name it is registered under (threestudio's `system_type: "dreamfusion-system"`)
        return project.flow.strings.cli_runs(setting.path) or _registered_runs(project, setting.path) or None
    summary = project.summaries.get(setting.path)
    flow = summary.flow if summary is not None else None
    if flow is None or setting.framework not in SCOPED:
        return None
    holders = _holders(flow, setting)
    if not holders:
        return None
    runs: List[Run] = []
    for key, holder in holders:
        for where, value, method, line in _models(flow, setting.framework, key, holder):
            site = f"{project.display(setting.path)}:{line}"
            held = project.flow.values(setting.path, where, value)
            if gaps is not None and setting.framework != "accelerate" and not any(t[0] == "inst" for t in held):
                why = project.flow.unresolved_reason(setting.path, where, value)
                if why is not None:
                    gaps.append((f"{_name(value)} at {site}", why))
            for thing, hold in sorted(held.items(), key=thing_order):
                if thing[0] == "inst":
                    source = f"{_name(value)} <- {hold.cite}" if hold.cite else _name(value)
                    runs.append((thing[1], thing[2], source, site, f"{method}() at {site}"))
    return runs or None


def _registered_runs(project, path: str) -> List[Run]:
    """The LightningModules a YAML that sets `trainer: precision:` names by a registered name
    (registered_names.py): the config selects the system its Trainer runs. A YAML naming none
    leaves the setting unresolved."""
    scalars = [(keys, value, line) for keys, value, line in yaml_keys(project.files[path]) if keys[0] != "trainer"]
    registered = registered_classes(project, {value for _, value, _ in scalars})
    runs: List[Run] = []
    for keys, value, line in scalars:
        target = registered.get(value)
        if target is None or not any(is_lightning_module(ref) for ref in project.external_bases(*target, set())):
            continue
        site = f"{project.display(path)}:{line}"
        runs.append((target[0], target[1], f"{'.'.join(keys)}: {value}", site,
                     f"the Trainer of {project.display(path)}, registered as {value!r}"))
    return runs


def _builds_setting(value, setting) -> bool:
    if type(value) is not tuple or not value or value[0] != "call" or value[3] != setting.line:
        return False
    callee = value[1]
    name = callee[1] if callee[0] == "ref" else callee[2] if callee[0] == "attr" else ""
    return name.rsplit(".", 1)[-1].endswith(_BUILDERS[setting.framework])


def _holders(flow, setting) -> List[Tuple[str, tuple]]:
    """(function key, value) for what holds the setting's instance: a local, `self.x`, or the
    call itself (`Trainer(precision=16).fit(model)`, `Trainer(args=TrainingArguments(...))`)."""
    found: List[Tuple[str, tuple]] = []
    for key in sorted(flow.functions):
        function = flow.functions[key]
        for name in sorted(function.assigns):
            if any(_builds_setting(value, setting) for value in function.assigns[name]):
                found.append((key, ("local", name)))
        for attr, value in function.stores:
            if _builds_setting(value, setting):
                found.append((key, ("self", attr)))
        for _, callee, args, _ in function.calls:
            values = [callee[1]] if callee[0] == "attr" else []
            values += [value for _, value in args]
            found.extend((key, value) for value in values if _builds_setting(value, setting))
    return found


def _models(flow, framework: str, key: str, holder) -> List[Tuple[str, tuple, str, int]]:
    """(function key, model value, "fit", line) for the calls that hand the holder's
    instance a model. `self.x` is looked for in every method of the class."""
    if holder[0] == "self" and "." in key:
        cls = key.split(".")[0]
        keys = [k for k in sorted(flow.functions) if k.startswith(cls + ".")]
    else:
        keys = [key]
    found = []
    for where in keys:
        for last, callee, args, line in flow.functions[where].calls:
            if framework == "huggingface":
                if not last.endswith("Trainer") or not any(v == holder for s, v in args if s == "args"):
                    continue
                slots = ("model", 0)
            elif callee[0] == "attr" and callee[1] == holder and last in _RUN_METHODS[framework]:
                slots = ("model", "module", 0)
            else:
                continue
            for slot, value in args:
                # accelerate prepares every positional argument; the others run the first
                if slot in slots or (framework == "accelerate" and isinstance(slot, int)):
                    found.append((where, value, last, line))
    return found


def _name(value) -> str:
    if value[0] in ("local", "self"):
        return ("self." if value[0] == "self" else "") + value[1]
    if value[0] == "call":
        return value[2]
    return "..."
