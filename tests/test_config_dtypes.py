"""A region dtype read from a config object's PROPERTY or ATTRIBUTE (r18-defaults; set K's
alpaca_lora_config_dtype_scaler: `torch.autocast("cuda", dtype=cfg.compute_dtype)` where
`compute_dtype` is a `@property` of the dataclass config returning torch.bfloat16, with
`cfg = TrainConfig(**kwargs)`; main knew dataclass field DEFAULTS only, and only for a config
built without arguments).

tests/projects/config_llama_recipes_dtypes: meta-llama/llama-recipes layout
(src/llama_recipes/finetuning.py main(**kwargs) driven by fire, configs/training.py
`train_config`, configs/fsdp.py `fsdp_config`, utils/train_utils.py `train(...)`) in a fork that
runs its own GradScaler loop: `train_config.autocast_dtype` is a property returning
torch.bfloat16, `fsdp_config.__init__` stores `self.mixed_precision_dtype = torch.bfloat16`, and
both regions run in bfloat16 with an always-enabled scaler (AMP124). The class is reached
through a parameter annotation (`cfg: train_config`) and a local built with arguments through
the package's re-export (`from llama_recipes.configs import fsdp_config`). Project pass:
project/config_dtypes.py; read by facts/dtype_fields.py.
Twins: a property that can return two dtypes, a subclass overriding it, another store of the
attribute (a literal or a parameter), a YAML naming the attribute, an unannotated parameter.
"""

from __future__ import annotations

import sys
import types

import pytest
from project_files import code_findings, load, own_package_texts

NAME = "config_llama_recipes_dtypes"
ROOT = "src/llama_recipes/"
TRAIN = (ROOT + "utils/train_utils.py", 9, "AMP124")
WARM = (ROOT + "finetuning.py", 12, "AMP124")
GETTER = '        """The fork trains on A100/H100 only."""\n        return torch.bfloat16\n'
STORE = "        self.mixed_precision_dtype = torch.bfloat16\n"
BUILT = '    fsdp_cfg = fsdp_config(sharding_strategy="NO_SHARD")\n'


def amp124(replace=(), extra=None):
    files = load(NAME, replace)
    files.update(extra or {})
    return code_findings(files, "AMP124")[0]


def test_property_and_attribute_dtypes_are_the_regions_dtype():
    assert amp124() == [WARM, TRAIN]


def test_twin_a_property_that_can_return_two_dtypes():
    two = "        if self.enable_fsdp:\n            return torch.float16\n        return torch.bfloat16\n"
    assert amp124(((GETTER, two),)) == [WARM]
    assert amp124(((GETTER, "        return torch.bfloat16 if self.enable_fsdp else torch.float16\n"),)) == [WARM]


def test_twin_a_subclass_overrides_the_property():
    sub = ("\n\n@dataclass\nclass lora_config(train_config):\n    @property\n"
           "    def autocast_dtype(self) -> torch.dtype:\n        return torch.float16\n")
    assert amp124(((GETTER, GETTER + sub),)) == [WARM]


def test_twin_another_store_of_the_attribute():
    assert amp124(((BUILT, BUILT + "    fsdp_cfg.mixed_precision_dtype = torch.float16\n"),)) == [TRAIN]
    assert amp124(((STORE, "        self.mixed_precision_dtype = mixed_precision_dtype\n"),
                   ('checkpoint_type="SHARDED_STATE_DICT"', 'checkpoint_type="SHARDED_STATE_DICT", '
                    "mixed_precision_dtype=torch.bfloat16"))) == [TRAIN]
    assert amp124(((STORE, STORE + "        if checkpoint_type == 'FULL':\n"
                    "            self.mixed_precision_dtype = torch.float16\n"),)) == [TRAIN]


@pytest.mark.parametrize("store", [
    "    cfg.mixed_precision_dtype: torch.dtype = torch.float16\n",
    "    cfg.mixed_precision_dtype, cfg.sharding_strategy = torch.float16, strategy\n",
    "    vars(cfg)[\"mixed_precision_dtype\"] = torch.float16\n",
    "    cfg.__dict__.update(mixed_precision_dtype=torch.float16)\n",
], ids=["annotated", "first-of-targets", "vars-subscript", "dict-update"])
def test_twin_another_store_in_a_helper_not_naming_the_class(store):
    """A helper of another file (not naming the class) stores the attribute another way."""
    helper = {NAME + "/" + ROOT + "utils/overrides.py": "import torch\n\n\ndef force_fp16(cfg, strategy):\n" + store}
    assert amp124(extra=helper) == [TRAIN]
    quiet = {NAME + "/" + ROOT + "utils/overrides.py": "import torch\n\n\ndef show(cfg, strategy):\n"
             "    print(cfg.sharding_strategy, cfg.mixed_precision_dtype)\n"
             "    return dict(dtype=cfg.mixed_precision_dtype, strategy=strategy)\n"}
    assert amp124(extra=quiet) == [WARM, TRAIN]  # reads of it are no stores


def test_twin_a_config_file_names_the_attribute():
    yaml = {NAME + "/recipes/fsdp.yaml": "sharding_strategy: FULL_SHARD\nmixed_precision_dtype: float16\n"}
    assert amp124(extra=yaml) == [TRAIN]


def test_twin_a_computed_store_in_a_file_naming_the_class():
    loop = BUILT + "    for key, value in OVERRIDES.items():\n        setattr(fsdp_cfg, key, value)\n"
    assert amp124(((BUILT, loop),)) == [TRAIN]


def test_twin_a_parameter_not_annotated_with_the_class():
    assert amp124(((", cfg: train_config):", ", cfg):"),)) == [WARM]


def test_same_file_property_through_the_project_pass():
    source = (
        "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass TrainConfig:\n"
        "    lr: float = 3e-4\n\n    @property\n    def compute_dtype(self):\n        return torch.bfloat16\n\n\n"
        "def train(model, batches, opt, **kwargs):\n    cfg = TrainConfig(**kwargs)\n"
        "    scaler = torch.amp.GradScaler('cuda')\n    for x in batches:\n"
        "        with torch.autocast('cuda', dtype=cfg.compute_dtype):\n            loss = model(x).sum()\n"
        "        scaler.scale(loss).backward()\n        scaler.step(opt)\n        scaler.update()\n"
    )
    assert code_findings({"probe/train.py": source}, "AMP124")[0] == [("train.py", 17, "AMP124")]
    two = source.replace("        return torch.bfloat16\n", "        return torch.bfloat16\n\n"
                         "    @compute_dtype.setter\n    def compute_dtype(self, value):\n        pass\n")
    assert code_findings({"probe/train.py": two}, "AMP124")[0] == []


def test_torch_the_property_and_attribute_run_the_region_in_bfloat16(monkeypatch):
    """torch 2.13 CPU: the project's own config classes, executed, give the autocast region
    bfloat16 matmuls."""
    torch = pytest.importorskip("torch")
    files = load(NAME)
    found = {}
    for path in (ROOT + "configs/training.py", ROOT + "configs/fsdp.py"):
        # a module of its own: without one, the dataclasses' __module__ is `builtins` and
        # dataclass() writes into the builtins' namespace, which every later test then sees
        module = types.ModuleType("config_probe_" + path.replace("/", "_")[:-3])
        monkeypatch.setitem(sys.modules, module.__name__, module)
        exec(compile(files[NAME + "/" + path], path, "exec"), module.__dict__)
        found.update(vars(module))
    layer = torch.nn.Linear(4, 4)
    for dtype in (found["train_config"]().autocast_dtype, found["fsdp_config"]("NO_SHARD").mixed_precision_dtype):
        with torch.autocast("cpu", dtype=dtype):
            assert layer(torch.randn(2, 4)).dtype == torch.bfloat16


def test_the_shape_pretest_is_the_line_search_it_replaces():
    """config_dtypes.holds_shape tries `_SHAPES` only at the lines that write a half dtype:
    it answers as `_SHAPES.search` on generated lines (llama-recipes-shaped `return
    torch.bfloat16`, `self.mixed_precision_dtype = torch.bfloat16`, comments, tabs, `\\r`,
    non-ASCII names, several literals a line, the literal at the text's start and end) and on
    this repository's own modules (on start: no holds_shape, ImportError)."""
    import random

    from amplint.analysis.project import config_dtypes

    pieces = ["    return torch.bfloat16", "\tself.mixed_precision_dtype = torch.bfloat16  # fsdp", "torch.half",
              "        self.\u00e9 =torch.float16", "  return torch.float16 torch.half", "x = torch.float16",
              "    return torch.float32", "  # return torch.bfloat16", "    return torch.halfx", " \r", "",
              "    self.x.y = torch.half", "    return  torch.bfloat16 #", "\treturn\ttorch.half\t", "torch.", "\n"]
    rng = random.Random(27)
    texts = ["\n".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8))) for _ in range(20000)]
    texts += own_package_texts("analysis")
    for text in texts:
        assert config_dtypes.holds_shape(text) == (config_dtypes._SHAPES.search(text) is not None), text
    assert any(config_dtypes.holds_shape(text) for text in texts) and not all(map(config_dtypes.holds_shape, texts))
