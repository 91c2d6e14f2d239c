"""An autocast's `dtype=` read from a dataclass config's field (issue 26, "fields of dataclasses
and config objects"): the region dtype is the field's default where the project pass says nothing
changes it (project/dtype_fields.py's EntryDtypeField, the fact AMP103 reads for `.to(dtype=...)`,
now read by facts/autocast_calls.py through facts/dtype_fields.field_dtype).

tests/projects/fielddtype_mingpt: karpathy/minGPT's layout (mingpt/model.py GPT,
mingpt/trainer.py's loop, projects/chargpt/chargpt.py), in a fork that keeps the trainer's
settings in `@dataclass TrainerConfig` (mingpt/config.py, `amp_dtype: torch.dtype =
torch.bfloat16`) and runs `torch.autocast(config.device, dtype=config.amp_dtype)` with
`config: TrainerConfig` and an always-enabled GradScaler: every region of trainer.py runs in
bfloat16 (AMP124; on main the field was no dtype). Clean twin: the default is torch.float16.
"""

from __future__ import annotations

import sys

import pytest

from project_files import code_findings, load
from amplint.analysis.engine import Settings

NAME = "fielddtype_mingpt"
FOUND = [("mingpt/trainer.py", 12, "AMP124")]
DEFAULT = "amp_dtype: torch.dtype = torch.bfloat16"
BUILT = "    config = TrainerConfig()\n"


def _amp124(replace=()):
    return code_findings(load(NAME, replace), "AMP124", Settings.default())[0]


def test_the_field_default_is_the_region_dtype():
    assert _amp124() == FOUND


def test_clean_twin_a_float16_default_is_silent():
    assert _amp124(((DEFAULT, "amp_dtype: torch.dtype = torch.float16"),)) == []


def test_a_construction_or_a_store_of_the_field_leaves_it_unknown():
    assert _amp124(((BUILT, "    config = TrainerConfig(amp_dtype=torch.float16)\n"),)) == []
    assert _amp124(((BUILT, BUILT + "    config.amp_dtype = torch.float16\n"),)) == []


def test_a_store_by_a_computed_name_leaves_it_unknown():
    """minGPT's chargpt runs `config.merge_from_args(sys.argv[1:])`, a `setattr(obj, key, value)`
    per `--key=value`: `--amp_dtype=torch.float16` makes the scaler needed. Twin: a setattr of
    another field, named as written, keeps the finding."""
    loop = BUILT + "    for key, value in OVERRIDES:\n        setattr(config, key, value)\n"
    assert _amp124(((BUILT, loop),)) == []
    assert _amp124(((BUILT, BUILT + "    config.__dict__.update(OVERRIDES)\n"),)) == []
    assert _amp124(((BUILT, BUILT + "    setattr(config, 'max_iters', 5)\n"),)) == FOUND


def test_a_name_not_annotated_with_the_class_is_not_read():
    assert _amp124(((("def run(model, batches, config: TrainerConfig):",
                      "def run(model, batches, config):")),)) == []


def test_torch_runs_the_region_in_bfloat16(tmp_path):
    """The premise under torch 2.13 on CPU: `dtype=config.amp_dtype` with the default config is
    a bfloat16 region; the loss the scaler scales comes from bfloat16 logits."""
    torch = pytest.importorskip("torch")
    root = tmp_path / NAME
    for path, text in load(NAME, (('device: str = "cuda"', 'device: str = "cpu"'),
                                  ("GradScaler(config.device)", "GradScaler(config.device, enabled=False)"))).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sys.path.insert(0, str(root))
    try:
        for name in [n for n in sys.modules if n == "mingpt" or n.startswith("mingpt.")]:
            sys.modules.pop(name)
        from mingpt.config import TrainerConfig
        from mingpt.model import GPT
        from mingpt.trainer import run

        model, seen = GPT(), []
        model.lm_head.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
        x = torch.randint(0, 64, (2, 8))
        run(model, [(x, x)], TrainerConfig())
        assert seen == [torch.bfloat16]
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "mingpt" or n.startswith("mingpt.")]:
            sys.modules.pop(name)
