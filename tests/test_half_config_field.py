"""AMP103 with the half dtype held by a nested dataclass config (amplint/analysis/project/
dtype_fields.py, facts/dtype_fields.py).

tests/projects/half_lingua_config: facebookresearch/lingua layout (apps/lm/args.py with
`TrainArgs` holding `model: LMTransformerArgs = field(default_factory=LMTransformerArgs)`, whose
`weight_dtype: torch.dtype = torch.float16`; apps/lm/train.py runs
`model.to(device=device, dtype=args.model.weight_dtype)` with `args: TrainArgs`, then trains
under autocast with a GradScaler; lingua/ holds the model and the optimizer). Proven on CPU: the
default config's dtype is float16, the model's weights become float16 and `scaler.unscale_`
raises. Twins, each where the default may not be what runs: the default float32; a script
setting the field; a config built with arguments; a YAML config naming the field; OmegaConf
loading the config; the parameter not annotated."""

from __future__ import annotations

import os
import sys

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load

NAME = "half_lingua_config"
SETTINGS = Settings.default()
FINDING = (f"{NAME}/apps/lm/train.py", 13, "AMP103")
FLOAT32 = (("weight_dtype: torch.dtype = torch.float16", "weight_dtype: torch.dtype = torch.float32"),)
SET_BY_SCRIPT = (("        args.name = argv[1]\n",
                  "        args.name = argv[1]\n        args.model.weight_dtype = torch.float32\n"),)
BUILT_WITH_ARGS = (("    args = TrainArgs()\n", "    args = TrainArgs(name=argv[0])\n"),)
OMEGACONF = (("import sys\n", "import sys\n\nfrom omegaconf import OmegaConf\n"),)
NOT_ANNOTATED = (("def train(args: TrainArgs, batches", "def train(args, batches"),)


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics)


def test_a_half_dtype_from_a_nested_dataclass_default_is_a_half_cast():
    results = lint_project(load(NAME), SETTINGS)
    found = [(path, d) for path, r in results.items() for d in r.diagnostics]
    assert sorted((path, d.line, d.code) for path, d in found) == [FINDING]
    message = found[0][1].message
    assert "`model.weight_dtype` of `TrainArgs` defaults to torch.float16 at apps/lm/args.py:13" in message
    assert "Attempting to unscale FP16 gradients" in message


@pytest.mark.parametrize("edits", [FLOAT32, SET_BY_SCRIPT, BUILT_WITH_ARGS, OMEGACONF, NOT_ANNOTATED],
                         ids=["float32", "set-by-script", "built-with-args", "omegaconf", "not-annotated"])
def test_twins_are_silent(edits):
    files = load(NAME, edits)
    assert files != load(NAME)
    assert findings(files) == []


def test_a_yaml_config_naming_the_field_is_silent():
    files = dict(load(NAME))
    files[f"{NAME}/apps/lm/configs/debug.yaml"] = "name: debug\nmodel:\n  weight_dtype: float32\n"
    assert findings(files) == []


def _train(float32: bool):
    torch = pytest.importorskip("torch")
    root = os.path.join(PROJECTS, NAME)
    sys.path.insert(0, root)
    try:
        from apps.lm import train as script
        from apps.lm.args import TrainArgs

        args = TrainArgs()
        if float32:  # the fixed default
            args.model.weight_dtype = torch.float32
        default = args.model.weight_dtype
        built = script.LMTransformer(args.model).to(device="cpu", dtype=args.model.weight_dtype)  # as train() does
        assert {p.dtype for p in built.parameters()} == {default}
        tokens = torch.randint(0, args.model.vocab_size, (2, 6))
        try:
            model = script.train(args, [tokens], device="cpu")
            return default, {p.dtype for p in model.parameters()}, None
        except ValueError as caught:
            return default, None, str(caught)
    finally:
        sys.path.remove(root)
        for name in [m for m in sys.modules if m in ("apps", "lingua") or m.startswith(("apps.", "lingua."))]:
            del sys.modules[name]


@pytest.mark.torch
def test_execution_the_default_config_halves_the_model_and_unscale_raises():
    torch = pytest.importorskip("torch")
    default, _, error = _train(float32=False)
    assert default is torch.float16
    assert error == "Attempting to unscale FP16 gradients."
    default, dtypes, error = _train(float32=True)
    assert (default, dtypes, error) == (torch.float32, {torch.float32}, None)
