"""Dtype objects carried by the project's value flow (facts/bound_values.py `dtypes`,
project/bound_flow.py, project/pointsto_atoms.py "O:"): the dtype an autocast region runs in
when `dtype=` is a name, an attribute or a helper's return, read by AMP124 (GradScaler with
every region bfloat16) and AMP133 (a dtype CPU autocast cannot run).

tests/projects/bound_llama_recipes_dtype: facebookresearch/llama-recipes layout
(llama_recipes/utils/config_utils.py's dtype helpers, utils/train_utils.py's trainer,
inference/model_utils.py's generator, finetuning.py, inference.py):
- AMP124: `get_autocast_dtype()` returns `torch.bfloat16` (or raises); the trainer keeps it as
  `self.autocast_dtype` and opens `torch.autocast("cuda", dtype=self.autocast_dtype)` with an
  enabled GradScaler: bf16 needs no loss scaling;
- AMP133: `inference_dtype()` returns `torch.float32`; the generator's
  `torch.autocast("cpu", dtype=self.amp_dtype)` warns and runs with autocast off (checked under
  torch below);
- AMP110 (the dtype fact reads the same objects): `scoring_dtype()` returns `torch.float16`; the
  safety scorer's `logits.to(self.dtype).masked_fill(banned, -1e9)` overflows float16.
Every value must be known on every path: a store of an unknown value in another method or file
(what a parameter holds: a caller the solve does not see may pass anything), a helper that may
fall off its end or return another dtype leave the region's dtype unknown, and both rules silent.
"""

from __future__ import annotations

import warnings

import pytest

from project_files import load
from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

NAME = "bound_llama_recipes_dtype"
TRAIN = "llama_recipes/utils/train_utils.py"
CONFIG = "llama_recipes/utils/config_utils.py"
TWIN = (("return torch.bfloat16", "return torch.float16"), ("return torch.float32", "return torch.bfloat16"),
        ("-1e9", "-1e4"))
SETTINGS = Settings.default()


def _all(replace=(), files=None):
    results = lint_project(files if files is not None else load(NAME, replace), SETTINGS)
    return sorted((path.split("/", 1)[1], d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics), results


def test_dtype_objects_cross_files_to_both_rules():
    found, results = _all()
    assert found == [("llama_recipes/inference/model_utils.py", 13, "AMP133"),
                     ("llama_recipes/inference/safety_utils.py", 17, "AMP110"), (TRAIN, 11, "AMP124")]
    messages = {d.code: d.message for r in results.values() for d in r.diagnostics}
    assert "every autocast region of this file runs in bfloat16 (line 14)" in messages["AMP124"]
    assert "`self.amp_dtype` holds `torch.float32` on every path" in messages["AMP133"]


def test_clean_twin_is_silent():
    assert _all(TWIN)[0] == []


def _edit(path, old, new, files=None):
    files = dict(files or load(NAME))
    key = NAME + "/" + path
    assert old in files[key]
    files[key] = files[key].replace(old, new)
    return files


def _amp124(files):
    return [f for f in _all(files=files)[0] if f[2] == "AMP124"]


@pytest.mark.parametrize("path, old, new", [
    # another method stores what its caller passes
    (TRAIN, "    def train_step(self, batch):",
     "    def set_dtype(self, cfg):\n        self.autocast_dtype = cfg.dtype\n\n    def train_step(self, batch):"),
    # the helper returns float16 on one path
    (CONFIG, 'raise ValueError("fp16 mixed precision is not supported by this recipe, use bf16")',
     "return torch.float16"),
    # the helper may fall off its end (None: autocast's default dtype)
    (CONFIG, "    return torch.bfloat16", "    if train_config.use_bf16:\n        return torch.bfloat16"),
    # the trainer's caller stores another value
    ("finetuning.py", "    for batch in loader:", "    trainer.autocast_dtype = train_config.dtype\n    for batch in loader:"),
    ("finetuning.py", "    for batch in loader:", "    trainer.autocast_dtype = torch.float16\n    for batch in loader:"),
])
def test_a_value_not_known_on_every_path_is_no_dtype(path, old, new):
    assert _amp124(_edit(path, old, new)) == []


def test_a_local_name_bound_to_the_helper():
    """`dtype = get_autocast_dtype(cfg)` in the function that opens the region."""
    files = _edit(TRAIN, "        with torch.autocast(\"cuda\", dtype=self.autocast_dtype):",
                  "        dtype = get_autocast_dtype(self.config)\n"
                  "        with torch.autocast(\"cuda\", dtype=dtype):")
    files = _edit(TRAIN, "self.autocast_dtype = get_autocast_dtype(train_config)",
                  "self.config = train_config", files)
    assert _amp124(files) == [(TRAIN, 11, "AMP124")]


def test_cpu_autocast_in_float32_runs_with_autocast_off():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast("cpu", dtype=torch.float32):
            out = torch.nn.Linear(4, 4)(torch.randn(2, 4))
    assert out.dtype == torch.float32
    assert any("not supported" in str(w.message) for w in caught)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.nn.Linear(4, 4)(torch.randn(2, 4)).dtype == torch.bfloat16


def test_a_cast_to_the_dtype_object_gives_the_tensor_dtype():
    """The dtype fact reads the same object (facts/bound_values.py `dtype_object`):
    `logits.to(self.dtype)` with `self.dtype` a helper's `torch.float16` is a float16 tensor, and
    `masked_fill(..., -1e9)` on it overflows (AMP110). With `torch.float32`, no finding."""
    path = "llama_recipes/inference/safety_utils.py"
    assert (path, 17, "AMP110") in _all()[0]
    files = _edit(CONFIG, "    return torch.float16", "    return torch.float32")
    assert [f for f in _all(files=files)[0] if f[0] == path] == []


def test_masked_fill_beyond_float16_raises():
    torch = pytest.importorskip("torch")
    scores = torch.randn(2, 3).to(torch.float16)
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(torch.ones(2, 3, dtype=torch.bool), -1e9)
