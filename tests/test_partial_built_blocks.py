"""Blocks built from a class their constructor is given, and an imported function called from a
same-file forward that the file's own region runs.

tests/projects/partial_flash_attn_gpt: Dao-AILab/flash-attention layout (flash_attn/ops/
fused_dense.py: `FusedDenseFunc` over the `fused_dense_lib` extension and its wrapper
`fused_dense_func`; benchmarks/train_gpt.py: one script writing out MHA, Mlp, Block and GPTModel
as flash_attn.models.gpt builds them, `create_block` passing `partial(MHA, num_heads=...)` to
`Block(dim, mixer_cls, mlp_cls)`, which stores `self.mixer = mixer_cls(dim)`; a float16 autocast
loop with a GradScaler), in a fork whose MHA masks with `-1e9` (AMP110) and whose FusedDenseFunc
lost its custom_fwd/custom_bwd (AMP151: its backward's `F.linear(grad_output, weight.t())`
meets a float16 gradient and the float32 weight outside autocast, which raises; shown below
with the same backward on CPU).

- The script alone (a one-file project gets no project pass): on main the file's callgraph did
  not follow `for layer in self.layers` (built by the factory `create_block`) nor `self.mixer(...)`
  (built from the `partial(MHA, ...)` the constructor is given): the region reached no MHA.
- The project: `GPTModel.forward`, run by the script's own region, calls the imported
  `fused_dense_func`; on main a function whose region its own file decides passed nothing on to
  other files, so the wrapper's `FusedDenseFunc.apply` got no region.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import code_findings, load

NAME = "partial_flash_attn_gpt"
SCRIPT = f"{NAME}/benchmarks/train_gpt.py"
OPS = f"{NAME}/flash_attn/ops/fused_dense.py"
MIXER = "mixer_cls = partial(MHA, num_heads=n_head)"
FILL = [("benchmarks/train_gpt.py", 26, "AMP110")]
APPLY = [("flash_attn/ops/fused_dense.py", 24, "AMP151")]


def _script_alone(replace=()):
    result = lint_source("benchmarks/train_gpt.py", load(NAME, replace)[SCRIPT], Settings.default())
    return sorted(("benchmarks/train_gpt.py", d.line, d.code) for d in result.diagnostics if d.code == "AMP110")


def test_mixer_built_from_a_partial_in_a_factory_built_block():
    assert MIXER in load(NAME)[SCRIPT]
    assert _script_alone() == FILL


def test_clean_twin_masks_with_minus_infinity():
    assert _script_alone((("-1e9)", 'float("-inf"))'),)) == []


@pytest.mark.parametrize("replace", [
    # the class chosen by a condition: not one class
    ((MIXER, "mixer_cls = partial(MHA, num_heads=n_head) if n_head else nn.Identity"),),
    # another construction passes another class
    (("    return Block(d_model, mixer_cls, mlp_cls)",
      "    spare = Block(d_model, nn.Identity, mlp_cls)\n    return Block(d_model, mixer_cls, mlp_cls)"),),
    # the attribute stored again elsewhere
    (("        self.norm2 = nn.LayerNorm(dim)", "        self.norm2 = nn.LayerNorm(dim)\n        self.mixer = nn.Identity()"),),
])
def test_a_mixer_class_not_known_exactly_reaches_nothing(replace):
    assert _script_alone(replace) == []


def test_imported_function_called_by_a_forward_the_region_runs():
    found, results = code_findings(load(NAME), "AMP151")
    assert found == APPLY
    message = next(d.message for d in results[OPS].diagnostics if d.code == "AMP151")
    assert "benchmarks/train_gpt.py:73" in message and "benchmarks/train_gpt.py:84" in message


def test_clean_twin_decorates_the_function():
    decorated = (("    @staticmethod\n    def forward", "    @staticmethod\n    @torch.amp.custom_fwd(device_type=\"cuda\")\n    def forward"),
                 ("    @staticmethod\n    def backward", "    @staticmethod\n    @torch.amp.custom_bwd(device_type=\"cuda\")\n    def backward"))
    assert code_findings(load(NAME, decorated), "AMP151")[0] == []


def test_premise_the_undecorated_backward_meets_two_dtypes():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    class Dense(torch.autograd.Function):  # FusedDenseFunc with torch's linear for the kernel
        @staticmethod
        def forward(ctx, x, weight):
            ctx.save_for_backward(x, weight)
            return F.linear(x, weight)

        @staticmethod
        def backward(ctx, grad_output):
            x, weight = ctx.saved_tensors
            return F.linear(grad_output, weight.t()), grad_output.t() @ x

    weight = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(2, 3, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Dense.apply(x, weight)
    assert out.dtype == torch.bfloat16
    with pytest.raises(RuntimeError):
        out.sum().backward()
