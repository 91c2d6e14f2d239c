"""A public module-level helper's parameters hold what the file's own calls pass
(facts/dtype_params.py): on main only private helpers (`_name`) were bound, so a float16 value
handed to a public helper was unknown inside it.

tests/projects/params_nerf_public: kwea123/nerf_pl layout (models/nerf.py's `Embedding`,
models/rendering.py's renderer, train.py's loop), in a fork whose `NeRFRenderer.forward` runs
its MLP under a float16 CPU autocast and hands the float16 `alphas` (sigmoid of a linear) to the
file's public `alpha_compositing(alphas, z_vals, eps: float = 1e-10)`, which takes
`log(1.0 - alphas + eps)`: under torch 2.13 the sigmoid saturates to 1.0 in float16, the eps
rounds away and the log is -inf (the rendered rgb and depth are NaN; in float32 the log is -23).
Clean twin: the renderer passes `alphas.float()` (no NaN under torch 2.13).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "params_nerf_public"
CALL = "weights, depth = alpha_compositing(alphas, z_vals)"
FINDING = ("models/rendering.py", 9, "AMP140")


def _amp140(replace=()):
    return code_findings(load(NAME, replace), "AMP140")[0]


def test_a_float16_value_passed_to_a_public_helper():
    assert CALL in load(NAME)[f"{NAME}/models/rendering.py"]
    assert _amp140() == [FINDING]


def test_the_finding_cites_the_region_of_the_call():
    _, results = code_findings(load(NAME), "AMP140")
    found = [d for d in results[f"{NAME}/models/rendering.py"].diagnostics if d.code == "AMP140"]
    assert len(found) == 1 and "autocast region at line 24" in found[0].message


def test_clean_twin_passes_float32():
    assert _amp140(((CALL, "weights, depth = alpha_compositing(alphas.float(), z_vals)"),)) == []


def test_a_second_call_outside_the_region_keeps_the_region_s_path():
    # the helper also runs outside any region, on float32; on the path through the region's
    # call it gets float16 (facts/dtype_paths.py), and the finding cites that call
    both = "    @torch.no_grad()\n    def render_fp32(self, alphas, z_vals):\n" \
           "        return alpha_compositing(alphas, z_vals)\n\n    def forward("
    assert _amp140((("    def forward(", both),)) == [FINDING]
    # the region's call passing float32: silent, whatever the other call passes
    assert _amp140((("    def forward(", both),
                    (CALL, "weights, depth = alpha_compositing(alphas.float(), z_vals)"))) == []


def test_a_helper_the_file_passes_on_is_unknown():
    stored = "COMPOSITORS = {'alpha': alpha_compositing}\n\n\nclass NeRFRenderer("
    assert _amp140((("class NeRFRenderer(", stored),)) == []


def test_a_helper_named_in_a_string_is_unknown():
    exported = "__all__ = ['alpha_compositing', 'NeRFRenderer']\n\n\ndef alpha_compositing("
    assert _amp140((("def alpha_compositing(", exported),)) == []


def test_a_call_of_another_file_leaves_this_file_s_path():
    # train.py calls it too, under its own bfloat16 region (not seen here): the finding is the
    # path through this file's call, which exists whatever other files pass
    files = (("from models.rendering import NeRFRenderer\n",
              "from models.rendering import NeRFRenderer, alpha_compositing\n"),
             ("            rgb, _ = renderer(pts, z_vals)\n",
              "            with torch.autocast('cpu', dtype=torch.bfloat16):\n"
              "                alpha_compositing(torch.rand_like(z_vals), z_vals)\n"
              "            rgb, _ = renderer(pts, z_vals)\n"))
    _, results = code_findings(load(NAME, files), "AMP140")
    found = [d for d in results[f"{NAME}/models/rendering.py"].diagnostics if d.code == "AMP140"]
    assert len(found) == 1 and "autocast region at line 24" in found[0].message


PUBLIC = '''import torch


def head(x):
    return x.view(-1)


def run(h, w):
    with torch.autocast("cuda", dtype=torch.float16):
        return head(h @ w)
'''


def test_the_fact_binds_a_public_function_every_call_of_which_runs_under_one_region():
    from test_dtype_params import value_of

    assert value_of(PUBLIC, "x.view(-1)") == {"float16"}
    # a call outside the region too: not every path of the file passes float16, but the path
    # through the region's call does (facts/dtype_paths.py)
    outside = PUBLIC + "\n\ndef eval_head(h, w):\n    return head(h @ w)\n"
    assert value_of(outside, "x.view(-1)") == {"float16"}
    # the region's call passes a float32 value: float32 on that path (`view` keeps it), and
    # the other call is never joined in
    cast = outside.replace("        return head(h @ w)", "        return head((h @ w).float())")
    assert value_of(cast, "x.view(-1)") == {"float32"}
    # passed on as a value: calls the file does not show
    hooks = PUBLIC + "\n\nHOOKS = [head]\n"
    assert value_of(hooks, "x.view(-1)") is None
