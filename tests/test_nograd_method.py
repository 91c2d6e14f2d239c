"""AMP150 through a no-grad method of another file (amplint/analysis/project/nograd_entries.py,
amplint/analysis/facts/nograd_methods.py): `net.generate(...)` where `generate` is decorated
`@torch.no_grad()` and calls `self(...)` runs the model's forward without grad; the grad forward
`net(...)` that follows in the same autocast region reuses its weight casts (torch < 2.11).

tests/projects/nograd_nanogpt_distill imitates karpathy/nanoGPT (model.py's GPT with
`@torch.no_grad() def generate` calling `self(idx_cond)`, a train script with the
`ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(...)` idiom): a
self-distillation step samples and trains under one `with ctx:`; the model reaches the step as
a parameter bound at the script's call site. The corrected twin passes `cache_enabled=False`.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, assert_warm_run_follows_an_edit, load

SETTINGS = Settings.default()
NAME = "nograd_nanogpt_distill"
FINDING = ("distill.py", 40, "AMP150")
DECORATOR = ("    @torch.no_grad()\n    def generate(", "    def generate(")


def amp150(files):
    return code_findings(files, "AMP150", SETTINGS)


def test_generate_then_grad_forward_in_one_region_is_reported_with_the_method():
    found, results = amp150(load(NAME))
    assert found == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150"]
    assert "`net` runs under no_grad (line 39, through `GPT.generate` (defined at model.py:63)" in message


def test_twin_with_cache_disabled_is_silent():
    files = load(NAME, (("dtype=ptdtype)\n", "dtype=ptdtype, cache_enabled=False)\n"),))
    assert amp150(files)[0] == []


def test_generate_without_no_grad_runs_with_grad_and_is_silent():
    assert amp150(load(NAME, (DECORATOR,)))[0] == []


def test_a_no_grad_method_that_runs_no_forward_is_silent():
    """`estimate_mfu` is `@torch.no_grad()` but never calls `self(...)`."""
    files = load(NAME, (("net.generate(prompts, new_tokens, top_k=200)", "net.estimate_mfu(1, 1.0)"),))
    assert amp150(files)[0] == []


def test_a_model_the_flow_cannot_resolve_is_silent():
    """The step's `net` comes from a loader outside the project: no class, no method, no guess."""
    files = load(NAME, (("    model = GPT(GPTConfig(**checkpoint[\"model_args\"]))\n",
                         "    model = torch.hub.load(\"karpathy/nanoGPT\", \"gpt2\")\n"),))
    assert amp150(files)[0] == []


def test_warm_run_follows_an_edit_of_the_model_file_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "model.py", (DECORATOR,), "AMP150", [FINDING])
