"""Framework-implied autocast regions.

A framework opens the autocast region for the user when mixed precision is switched on in its
settings; the code it then runs under autocast is known from its documentation:

- Lightning `Trainer(precision="16-mixed" | "bf16-mixed" | 16 | "16" | "bf16")` (also the
  `trainer: precision:` key of a LightningCLI YAML file): `training_step`, `validation_step`,
  `test_step`, `predict_step` and `forward` of LightningModule subclasses. Fabric
  `Fabric(precision=...)`: `forward` of the modules passed to `fabric.setup(...)`.
- accelerate `Accelerator(mixed_precision="fp16" | "bf16")`: `forward` of the models passed to
  `accelerator.prepare(...)` (accelerate wraps it in autocast); `accelerator.autocast()` regions
  are seen by the file analysis itself.
- mmengine / MMDetection 3 `optim_wrapper = dict(type="AmpOptimWrapper", ...)`: `forward` and
  `loss` of model classes (subclasses of the mm* model bases, or registered with an mm* MODELS
  registry), which `BaseModel.train_step` runs inside `optim_wrapper.optim_context(self)`.
- detectron2 `AMPTrainer`, `SOLVER.AMP.ENABLED: True` (YAML or Python), LazyConfig
  `train.amp.enabled = True`: `forward` of model classes (registered in a detectron2 registry or
  subclassing a detectron2.modeling class), which AMPTrainer.run_step calls under autocast.
- Hugging Face `TrainingArguments(fp16=True | bf16=True)` (any *TrainingArguments, trl configs):
  `forward` of PreTrainedModel subclasses and of models passed as `Trainer(model=...)`; the
  Trainer lets accelerate wrap the model's forward in autocast. `compute_loss` itself is *not* a
  region in current transformers (its `autocast_smart_context_manager` returns a nullcontext:
  only the model's forward is autocast, and its outputs are converted back to float32).

Values given as expressions (`precision=args.precision`) make *maybe enabled* regions; a value
that selects no autocast ("32-true", "16-true", "no", `fp16=False`) makes none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.syntax import bound_arguments, literal_bool, literal_str
from amplint.analysis.facts.tree import dotted_name


@dataclass(frozen=True)
class Setting:
    """A framework mixed-precision setting found in the code (see frameworks.py)."""

    framework: str  # "lightning" | "accelerate" | "mmengine" | "detectron2" | "huggingface"
    enabled: Enabled
    device: Optional[str]
    dtype: Optional[str]
    text: str  # how to cite it: 'Trainer(precision="16-mixed")'
    path: str
    line: int


# Text tests: a file is parsed for settings only if one of these matches.
SETTING_TEXT = re.compile(
    r"precision\s*=|AmpOptimWrapper|AMPTrainer|AMP\.ENABLED|amp\.enabled|(?:fp|bf)16\s*="
)
# the literal part of each alternative: one of them is in every text SETTING_TEXT matches
SETTING_WORDS = ("precision", "AmpOptimWrapper", "AMPTrainer", "AMP.ENABLED", "amp.enabled", "fp16", "bf16")
YAML_SETTING_TEXT = re.compile(r"precision|AMP")

# Text tests for files that may define the classes a framework runs.
CLASS_TEXT = {
    "lightning": re.compile(r"LightningModule"),
    "mmengine": re.compile(r"register_module|mm\w*\.models|BaseModel"),
    "detectron2": re.compile(r"_REGISTRY|detectron2\.modeling"),
    "huggingface": re.compile(r"PreTrainedModel"),
}

LIGHTNING_HOOKS = ("training_step", "validation_step", "test_step", "predict_step", "forward")
MM_METHODS = ("forward", "loss")
MM_PACKAGES = (
    "mmengine", "mmdet", "mmseg", "mmpretrain", "mmcls", "mmpose", "mmrotate", "mmocr",
    "mmdet3d", "mmaction", "mmyolo", "mmagic", "mmtrack",
)
MM_REGISTRIES = ("MODELS", "LOSSES", "HEADS", "BACKBONES", "NECKS", "DETECTORS", "SEGMENTORS")

_LIGHTNING_MIXED = {"16-mixed": "float16", "16": "float16", "bf16-mixed": "bfloat16", "bf16": "bfloat16"}
_ACCELERATE_MIXED = {"fp16": "float16", "bf16": "bfloat16"}
_DEVICES = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda"}
_LIGHTNING_TRAINERS = frozenset({
    "lightning.pytorch.trainer.Trainer", "lightning.pytorch.Trainer", "lightning.Trainer",
    "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer",
    "lightning.pytorch.trainer.trainer.Trainer",
})

DESCRIPTIONS = {
    "lightning": "Lightning's autocast",
    "fabric": "Fabric's autocast",
    "accelerate": "accelerate's autocast",
    "mmengine": "mmengine's AmpOptimWrapper autocast",
    "detectron2": "detectron2's AMPTrainer autocast",
    "huggingface": "the Hugging Face Trainer's autocast",
}


def _lightning(ref: str) -> bool:
    return ref.startswith(("lightning.", "pytorch_lightning.", "lightning_fabric."))


def is_lightning_module(ref: str) -> bool:
    return _lightning(ref) and ref.rsplit(".", 1)[-1] == "LightningModule"


def is_mm_model_base(ref: str) -> bool:
    parts = ref.split(".")
    return parts[0] in MM_PACKAGES and (len(parts) > 1 and parts[1] == "model" or "models" in parts)


def is_mm_registration(ref: str) -> bool:
    parts = ref.split(".")
    return (
        parts[0] in MM_PACKAGES and parts[-1] == "register_module" and len(parts) >= 2
        and parts[-2] in MM_REGISTRIES
    )


def is_d2_model_base(ref: str) -> bool:
    return ref.startswith("detectron2.modeling")


def is_d2_registration(ref: str) -> bool:
    parts = ref.split(".")
    return parts[0] == "detectron2" and parts[-1] == "register" and parts[-2].endswith("_REGISTRY")


def is_hf_model_base(ref: str) -> bool:
    return ref.startswith("transformers.") and ref.endswith("PreTrainedModel")


# -- settings in a parsed file ------------------------------------------------------------------

def _choice(expr: Optional[cst.BaseExpression], table: Dict, depth: int = 0):
    """(Enabled, dtype) for a precision value, or None when it selects no autocast."""
    if expr is None or depth > 3:
        return None
    if isinstance(expr, cst.IfExp):
        for branch in (expr.body, expr.orelse):
            found = _choice(branch, table, depth + 1)
            if found is not None:
                return (Enabled.MAYBE, found[1])
        return None
    value = literal_str(expr)
    if value is None and isinstance(expr, cst.Integer):
        value = expr.value
    if value is not None:
        dtype = table.get(value)
        return (Enabled.TRUE, dtype) if dtype else None
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)):
        return None
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return None
    return (Enabled.MAYBE, None)  # `precision=args.precision`: the mixed run is possible


def _flag(expr: Optional[cst.BaseExpression]) -> Optional[Enabled]:
    if expr is None:
        return None
    flag = literal_bool(expr)
    if flag is True:
        return Enabled.TRUE
    if flag is False or isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        return None
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    return Enabled.MAYBE


def find_settings(sz) -> None:
    """Framework settings and framework-run models in the file `sz` (a summary.Summarizer)
    summarises; results land on `sz.summary.settings` / `.prepared` once lines are known."""
    module = sz.module
    found: List[Tuple[str, Enabled, Optional[str], Optional[str], str, cst.CSTNode]] = []
    prepared: List[Tuple[str, str]] = []

    def code(node: cst.CSTNode) -> str:
        text = module.code_for_node(node).strip()
        return text if len(text) <= 40 else text[:37] + "..."

    for site in sz.tree.calls:
        call = site.node
        ref = sz.names.resolve(site.dotted, site.frame) or ""
        last = ref.rsplit(".", 1)[-1]
        args = bound_arguments(call, ())
        if _lightning(ref) and last in ("Trainer", "Fabric"):
            choice = _choice(args.get("precision"), _LIGHTNING_MIXED)
            if choice is not None:
                device = _DEVICES.get(literal_str(args.get("accelerator")) or "")
                framework = "lightning" if last == "Trainer" else "fabric"
                text = f"{last}(precision={code(args['precision'])})"
                found.append((framework, choice[0], device, choice[1], text, call))
        elif ref.startswith("accelerate.") and last == "Accelerator":
            choice = _choice(args.get("mixed_precision"), _ACCELERATE_MIXED)
            if choice is not None:
                device = "cpu" if literal_bool(args.get("cpu")) else (
                    "cuda" if choice[1] == "float16" else None
                )
                text = f"Accelerator(mixed_precision={code(args['mixed_precision'])})"
                found.append(("accelerate", choice[0], device, choice[1], text, call))
        elif ref.startswith(("transformers.", "trl.")) and (
            last.endswith("TrainingArguments") or (ref.startswith("trl.") and last.endswith("Config"))
        ):
            for key, dtype in (("fp16", "float16"), ("bf16", "bfloat16")):
                enabled = _flag(args.get(key))
                if enabled is not None:
                    device = "cpu" if literal_bool(args.get("use_cpu")) else (
                        "cuda" if dtype == "float16" else None
                    )
                    text = f"{last}({key}={code(args[key])})"
                    found.append(("huggingface", enabled, device, dtype, text, call))
                    break
        elif last == "AmpOptimWrapper" and ref.split(".")[0] in MM_PACKAGES:
            found.append(("mmengine", Enabled.TRUE, "cuda", _mm_dtype(args), "AmpOptimWrapper(...)", call))
        elif ref.startswith("detectron2.") and last == "AMPTrainer":
            found.append(("detectron2", Enabled.TRUE, "cuda", "float16", "AMPTrainer(...)", call))
        elif isinstance(call.func, cst.Name) and call.func.value == "dict" and ref == "":
            kind = args.get("type")
            type_ref = literal_str(kind) if kind is not None else None
            if type_ref is None and kind is not None:
                type_ref = (sz.names.resolve_expr(kind, site.frame) or "").rsplit(".", 1)[-1]
            if type_ref == "AmpOptimWrapper":
                enabled = Enabled.TRUE if site.frame.kind == "module" else Enabled.MAYBE
                found.append(("mmengine", enabled, "cuda", _mm_dtype(args), "optim_wrapper = dict(type='AmpOptimWrapper')", call))
            elif "enabled" in args and _is_d2_amp_dict(site, sz):
                enabled = _flag(args["enabled"])
                if enabled is not None:
                    found.append(("detectron2", enabled, "cuda", "float16", "amp=dict(enabled=...)", call))
        # models a framework runs
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("prepare", "prepare_model", "setup", "setup_module"):
            receiver = dotted_name(call.func.value)
            if receiver and not (sz.names.resolve(receiver, site.frame) or "").startswith("torch"):
                framework = "accelerate" if call.func.attr.value.startswith("prepare") else "fabric"
                for arg in call.args:
                    if arg.keyword is None and not arg.star:
                        cls = sz.instance_ref(arg.value, site.frame) or sz.class_of_value(arg.value, site.frame)
                        if cls is not None:
                            prepared.append((framework, cls))
        if "model" in args and "args" in args and (last.endswith("Trainer") or (
            isinstance(call.func, cst.Name) and call.func.value.endswith("Trainer")
        )):
            value = args["model"]
            cls = sz.instance_ref(value, site.frame) or sz.class_of_value(value, site.frame)
            if cls is not None:
                prepared.append(("huggingface", cls))
    # detectron2 / mmengine settings written as assignments
    for assign in sz.tree.assigns:
        for target in assign.targets:
            name = dotted_name(target)
            if not name:
                continue
            if name[-3:] == ("SOLVER", "AMP", "ENABLED") or name == ("train", "amp", "enabled"):
                enabled = _flag(assign.value)
                if enabled is not None:
                    found.append(("detectron2", enabled, "cuda", "float16", ".".join(name[-3:]) + " = " + code(assign.value), assign.value))
            elif name[-2:] == ("optim_wrapper", "type") and literal_str(assign.value) == "AmpOptimWrapper":
                enabled = Enabled.TRUE if assign.frame.kind == "module" else Enabled.MAYBE
                found.append(("mmengine", enabled, "cuda", "float16", "optim_wrapper.type = 'AmpOptimWrapper'", assign.value))
    for cls in sz.summary.classes.values():
        if any(base.startswith("detectron2.") and base.endswith("AMPTrainer") for base in cls.bases):
            node = sz.tree.classes[cls.name].node
            found.append(("detectron2", Enabled.TRUE, "cuda", "float16", f"class {cls.name}(AMPTrainer)", node.name))
    sz.summary.prepared = sorted(set(prepared))
    for item in found:
        sz.want_line(item[5])

    def finish(lines) -> None:
        sz.summary.settings = [
            Setting(framework, enabled, device, dtype, text, sz.path, lines.get(id(node), 0))
            for framework, enabled, device, dtype, text, node in found
        ]

    sz.after_lines(finish)


def _mm_dtype(args: Dict[str, cst.BaseExpression]) -> str:
    dtype = args.get("dtype")
    if dtype is None:
        return "float16"
    name = literal_str(dtype) or ".".join(dotted_name(dtype) or ())
    return "bfloat16" if "bfloat16" in name or name == "bf16" else "float16"


def _is_d2_amp_dict(site, sz) -> bool:
    """`amp=dict(enabled=True)` inside detectron2's LazyConfig `train = dict(...)`."""
    line = site.line_stmt
    if line is None:
        return False
    for small in line.body:
        if isinstance(small, cst.Assign) and any(
            dotted_name(t.target) == ("train",) for t in small.targets
        ):
            value = small.value
            if isinstance(value, cst.Call):
                for arg in value.args:
                    if arg.keyword is not None and arg.keyword.value == "amp" and arg.value is site.node:
                        return True
    return False


# -- YAML settings (detectron2 configs, LightningCLI configs) ----------------------------------

_YAML_LINE = re.compile(r"^(\s*)([A-Za-z_][\w.-]*)\s*:\s*(.*?)\s*(?:#.*)?$")


def yaml_keys(text: str) -> Iterable[Tuple[Tuple[str, ...], str, int]]:
    """(key path, scalar value, line) for the block-style mappings of a YAML text: enough for
    configuration keys, not a YAML parser."""
    stack: List[Tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(("#", "-")):
            continue
        match = _YAML_LINE.match(line)
        if match is None:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key, value = match.group(2), match.group(3).strip().strip("'\"")
        path = tuple(k for _, k in stack) + (key,)
        if value:
            yield path, value, number
        else:
            stack.append((indent, key))


def yaml_settings(path: str, text: str) -> List[Setting]:
    if not YAML_SETTING_TEXT.search(text):
        return []
    found: List[Setting] = []
    keys_found = list(yaml_keys(text))
    # `trainer: accelerator: gpu` beside the precision: Lightning's CUDA autocast
    device = next((_DEVICES.get(v) for k, v, _ in keys_found if k[-2:] == ("trainer", "accelerator")), None)
    # a Hydra config of the Trainer itself (lightning-hydra-template's configs/trainer/*.yaml):
    # `_target_: lightning.pytorch.trainer.Trainer` with `precision:` beside it at the top
    hydra_trainer = any(k == ("_target_",) and v.strip("'\"") in _LIGHTNING_TRAINERS for k, v, _ in keys_found)
    if hydra_trainer:
        device = next((_DEVICES.get(v) for k, v, _ in keys_found if k == ("accelerator",)), device)
    for keys, value, line in keys_found:
        if hydra_trainer and keys == ("precision",) and value.strip("'\"") in _LIGHTNING_MIXED:
            value = value.strip("'\"")
            found.append(Setting(
                "lightning", Enabled.TRUE, device, _LIGHTNING_MIXED[value],
                f"precision: {value} (Hydra `_target_` Trainer)", path, line,
            ))
            continue
        if keys[-3:] == ("SOLVER", "AMP", "ENABLED") and value.lower() == "true":
            found.append(Setting("detectron2", Enabled.TRUE, "cuda", "float16", "SOLVER.AMP.ENABLED: True", path, line))
        elif keys[-2:] == ("trainer", "precision") and value in _LIGHTNING_MIXED:
            found.append(Setting(
                "lightning", Enabled.TRUE, device, _LIGHTNING_MIXED[value],
                f"trainer.precision: {value}", path, line,
            ))
    return found
