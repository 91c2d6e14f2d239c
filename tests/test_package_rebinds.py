"""`from pkg import name` where pkg/__init__.py imports a `name` of its own from a submodule
of the same name (project/resolve.py `_package_rebinds`): `pkg.name` is that binding, not the
submodule (the `__init__`'s import rebinds the package attribute the submodule's import set).

tests/projects/reexport_xformers_fused_mlp is laid out like facebookresearch/xformers
(xformers/ops/ with a fused linear+GELU autograd.Function exported as `fused_linear_gelu =
_FusedLinearGelu.apply` from xformers/ops/fused_linear_gelu.py and re-exported by
xformers/ops/__init__.py; xformers/components/feedforward/__init__.py register_feedforward /
build_feedforward over FEEDFORWARD_REGISTRY; fused_mlp.py FusedMLP; examples/microGPT.py GPT
and its training loop) in a fork whose microGPT trains under a bfloat16 autocast: FusedMLP's
`fused_linear_gelu(...)` runs a Function without custom_fwd/custom_bwd (AMP151). The twin
decorates forward and backward.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

NAME = "reexport_xformers_fused_mlp"
MLP = "xformers/components/feedforward/fused_mlp.py"
DECORATED = (("    @staticmethod\n    def forward", '    @staticmethod\n    @torch.amp.custom_fwd(device_type="cuda")\n    def forward'),
             ("    @staticmethod\n    def backward", '    @staticmethod\n    @torch.amp.custom_bwd(device_type="cuda")\n    def backward'))


def amp151(*edits):
    found, results = code_findings(load(NAME, edits), "AMP151", Settings.default())
    return found, [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP151"]


def test_a_function_the_package_reexports_under_its_submodules_name_is_the_function():
    found, messages = amp151()
    assert found == [(MLP, 18, "AMP151")]
    assert "(_FusedLinearGelu, defined at xformers/ops/fused_linear_gelu.py:12)" in messages[0]
    assert amp151(*DECORATED) == ([], [])


def test_a_call_through_the_package_binding_as_if_it_were_the_submodule_is_not_claimed():
    edits = (("from xformers.ops import fused_linear_gelu\n", "from xformers.ops import fused_linear_gelu as ops\n"),
             ("self.proj(fused_linear_gelu(", "self.proj(ops.fused_linear_gelu("))
    # `ops` is the function here (the package's binding): it has no attribute `fused_linear_gelu`,
    # and nothing is claimed for the call
    assert amp151(*edits)[0] == []
    assert amp151()[0] == [(MLP, 18, "AMP151")]
