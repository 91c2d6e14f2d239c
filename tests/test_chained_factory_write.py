"""A float factory written as it is made: `torch.zeros(...).index_add_(0, idx, h)` (AMP101), the
chained form of `buf = torch.zeros(...); buf.index_add_(0, idx, h)`; and the elementwise product
of two half values is half.

tests/projects/chained_schnetpack_interaction: atomistic-machine-learning/schnetpack layout
(schnetpack/representation/schnet.py: `SchNetInteraction`'s continuous-filter convolution
aggregates the messages `x_ij = h[idx_j] * W` of the neighbours of each atom with `index_add_`,
`SchNet` runs the interactions in a loop; train.py a bfloat16 CUDA autocast loop), in a fork
whose aggregation buffer has no `dtype=`. Under autocast `h` and `W` are Linear outputs (bfloat16),
so is their product, and torch 2.13 raises 'index_add_(): self (Float) and source (BFloat16)
must have the same scalar type' (run below on CPU). On main the chained write was not read, nor
the product taken for half. Clean twin: `dtype=x_ij.dtype`.
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

NAME = "chained_schnetpack_interaction"
SCHNET = f"{NAME}/schnetpack/representation/schnet.py"
AGGREGATE = "agg = torch.zeros(x.shape[0], self.n_filters, device=x.device).index_add_(0, idx_i, x_ij)"
FINDING = [("schnetpack/representation/schnet.py", 34, "AMP101")]


def _amp101(replace=()):
    return code_findings(load(NAME, replace), "AMP101")


def test_chained_index_add_into_a_float32_factory():
    assert AGGREGATE in load(NAME)[SCHNET]
    found, results = _amp101()
    assert found == FINDING
    diagnostic = next(d for d in results[SCHNET].diagnostics if d.code == "AMP101")
    assert "line 34 writes `x_ij`" in diagnostic.message
    assert diagnostic.fix is not None and diagnostic.fix.message == "Pass `dtype=x_ij.dtype`"


def test_clean_twin_makes_the_buffer_in_the_messages_dtype():
    fixed = AGGREGATE.replace("device=x.device)", "dtype=x_ij.dtype, device=x.device)")
    assert _amp101(((AGGREGATE, fixed),))[0] == []


def test_a_product_with_a_float32_tensor_is_float32():
    # the distances' features are float32 (no autocast op makes them): the product promotes
    assert _amp101((("x_ij = h[idx_j] * W", "x_ij = h[idx_j] * f_ij[:, :1]"),))[0] == []


def test_a_product_with_a_number_keeps_the_half_value():
    assert _amp101((("x_ij = h[idx_j] * W", "x_ij = W * 0.5"),))[0] == FINDING


def test_premise_the_chained_write_raises_under_bfloat16_autocast():
    torch = pytest.importorskip("torch")
    import importlib.util
    import os

    from project_files import PROJECTS

    path = os.path.join(PROJECTS, NAME, "schnetpack", "representation", "schnet.py")
    spec = importlib.util.spec_from_file_location("schnet_probe", path)
    schnet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(schnet)
    layer = schnet.SchNetInteraction(8, 5, 8)
    x, f_ij = torch.randn(4, 8), torch.randn(6, 5)
    idx_i, idx_j = torch.tensor([0, 0, 1, 2, 3, 3]), torch.tensor([1, 2, 0, 3, 2, 1])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(RuntimeError, match="same scalar type"):
            layer(x, f_ij, idx_i, idx_j)
        # the product of a float32 tensor with the bfloat16 filter is float32: no error
        assert (layer.in2f(x)[idx_j] * f_ij[:, :1]).dtype == torch.float32
    layer(x, f_ij, idx_i, idx_j)  # float32: it runs
