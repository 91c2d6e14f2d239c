"""A float32 buffer a method keeps on `self` and writes half values into (facts/buffer_writes
held_buffer, AMP101): on main only a local `buf = torch.zeros(...)` was followed.

tests/projects/params_gptfast_cache: pytorch-labs/gpt-fast layout (model.py's `Transformer` and
`Attention`, generate.py's `prefill` / `generate`), in a fork whose attention builds its key
cache on the first forward, `self.k_cache = torch.zeros(shape, device=x.device)` (no dtype;
`self.k_cache = None` in `__init__`), and writes the new keys by position,
`self.k_cache[:, :, input_pos] = k`, with `k` a piece of `self.wqkv(x).split(...)`. generate.py
runs the model under a bfloat16 CPU autocast: under torch 2.13 `k` is bfloat16, the cache float32,
and the advanced-index write raises 'Index put requires the source and destination dtypes match'
(checked below; a basic slice write, `self.k_cache[:, :, :n] = k`, casts silently instead).
Clean twin: the cache is made with `dtype=torch.bfloat16`, the autocast's dtype (`x` is the
float32 embedding there, so `dtype=x.dtype` would not do).
"""

from __future__ import annotations

import sys

import pytest

from project_files import code_findings, load

NAME = "params_gptfast_cache"
MADE = "self.k_cache = torch.zeros(shape, device=x.device)"
FINDING = ("model.py", 23, "AMP101")


def _amp101(replace=()):
    return code_findings(load(NAME, replace), "AMP101")


def test_a_held_cache_written_with_half_keys():
    found, results = _amp101()
    assert found == [FINDING]
    [diagnostic] = [d for d in results[f"{NAME}/model.py"].diagnostics if d.code == "AMP101"]
    assert "generate.py:7" in diagnostic.message and "line 24 writes `k`" in diagnostic.message
    assert diagnostic.fix is None  # kept across calls: no one value's dtype to copy


def test_clean_twin_made_in_the_autocast_dtype():
    twin = MADE[:-1] + ", dtype=torch.bfloat16)"
    assert _amp101(((MADE, twin),))[0] == []


def test_a_basic_slice_write_converts():
    write = "self.k_cache[:, :, input_pos] = k"
    assert _amp101(((write, "self.k_cache[:, :, : k.size(2)] = k"),))[0] == []


def test_another_store_of_the_cache_leaves_it_unknown():
    # a method that sets the cache in another dtype: the one written may be that one
    setup = ("    def setup_cache(self, bsz, dtype):\n"
             "        self.k_cache = torch.zeros(bsz, 4, 64, 8, dtype=dtype)\n\n"
             "    def forward(self, x, input_pos):\n")
    assert _amp101((("    def forward(self, x, input_pos):\n", setup),))[0] == []
    reset = "        self.k_cache = None\n"
    assert _amp101(((reset, reset + "        setattr(self, 'k' + '_cache', None)\n"),))[0] == []


def test_torch_raises_on_the_project_and_not_on_its_twin(tmp_path):
    torch = pytest.importorskip("torch")

    def run(where, replace=()):
        for path, text in load(NAME, replace).items():
            target = where / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        sys.path.insert(0, str(where / NAME))
        try:
            for name in ("model", "generate"):
                sys.modules.pop(name, None)
            import generate

            generate.generate(torch.randint(0, 100, (1, 5)))
        finally:
            sys.path.remove(str(where / NAME))
            for name in ("model", "generate"):
                sys.modules.pop(name, None)

    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        run(tmp_path / "hazard")
    run(tmp_path / "clean", ((MADE, MADE[:-1] + ", dtype=torch.bfloat16)"),))
