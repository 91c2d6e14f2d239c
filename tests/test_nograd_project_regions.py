"""AMP150 in a region the project pass opens (project/context_params.seeds_under): a region
held from an opener of another file (`self.amp_ctx = get_amp_context(args)`, the
nullcontext-or-autocast helper, then `with self.amp_ctx:`) that calls a `@torch.no_grad()`
sampler of another file with the policy, then runs the policy with grad. The sampler is
imported relatively (`from .ppo_utils.experience_maker import generate_samples`), which the
file's own imports leave to the project pass (facts/names.relative_ref). An opener whose
autocast passes `cache_enabled=False` keeps no cast cache: silent (Region.cache_off).

tests/projects/nograd_openrlhf_held imitates OpenRLHF/OpenRLHF's layout (train_ppo.py,
openrlhf/trainer/ppo_trainer.py PPOTrainer.ppo_train_step/fit,
openrlhf/trainer/ppo_utils/experience_maker.py, openrlhf/utils/), with its DeepSpeed engine
replaced by a plain optimizer and an autocast helper of its own.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings, lint_source

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "nograd_openrlhf_held"
TRAINER = "openrlhf/trainer/ppo_trainer.py"
FINDING = (TRAINER, 18, "AMP150")
RELATIVE = "from .ppo_utils.experience_maker import compute_reward, generate_samples\n"
ABSOLUTE = "from openrlhf.trainer.ppo_utils.experience_maker import compute_reward, generate_samples\n"
HELD = "with self.amp_ctx:"
AUTOCAST = 'return torch.autocast("cuda", dtype=dtype)'
SAMPLE = 'generate_samples(actor, batch["input_ids"]'


def amp150(*edits):
    return code_findings(load(NAME, edits), "AMP150", SETTINGS)


def test_the_sampler_of_another_file_pairs_with_the_grad_forward_in_a_held_opener_region():
    found, results = amp150()
    assert found == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150"]
    assert "through `generate_samples` (defined at openrlhf/trainer/ppo_utils/" \
           "experience_maker.py:5), which runs its `actor` under no_grad" in message
    assert "self.amp_ctx <- get_amp_context(...)" in message


def test_an_absolute_import_of_the_sampler():
    assert amp150((RELATIVE, ABSOLUTE))[0] == [FINDING]


def test_a_relative_import_under_the_files_own_autocast():
    edits = ((HELD, 'with torch.autocast("cuda", dtype=torch.bfloat16):'),)
    assert amp150(*edits)[0] == [FINDING]


@pytest.mark.parametrize("edits", [
    # the fix, in the helper of the other file
    ((AUTOCAST, 'return torch.autocast("cuda", dtype=dtype, cache_enabled=False)'),),
    # the sampler runs with grad
    (("@torch.no_grad()\ndef generate_samples", "def generate_samples"),),
    # samples come from the reference model
    ((SAMPLE, 'generate_samples(self.ref_actor, batch["input_ids"]'),),
    # a local function of the sampler's name (not the import)
    ((RELATIVE, "from .ppo_utils.experience_maker import compute_reward\n"),
     ("    def ppo_train_step(self, actor, batch):\n",
      "    def ppo_train_step(self, actor, batch, generate_samples=None):\n")),
    # the sampler's name imported from two modules: which one runs is not known
    ((RELATIVE, "try:\n    " + RELATIVE + "except ImportError:\n    from .ppo_utils.legacy import compute_reward, generate_samples\n"),),
    # the helper opens no autocast
    ((AUTOCAST, "return nullcontext()"),),
])
def test_clean_twins_stay_silent(edits):
    assert amp150(*edits)[0] == []


def test_one_file_opener_with_cache_disabled_is_silent():
    source = (
        "from contextlib import nullcontext\nimport torch\n"
        "def get_amp_context(bf16):\n"
        "    if not bf16:\n        return nullcontext()\n"
        "    return torch.autocast('cuda', dtype=torch.bfloat16, cache_enabled=False)\n"
        "@torch.no_grad()\ndef sample(model, ids):\n    return model(ids)\n"
        "def step(model, ids, bf16):\n"
        "    with get_amp_context(bf16):\n"
        "        out = sample(model, ids)\n"
        "        return model(out)\n"
    )
    assert [d.code for d in lint_source("t.py", source, SETTINGS).diagnostics] == []
    flagged = source.replace(", cache_enabled=False", "")
    assert [d.code for d in lint_source("t.py", flagged, SETTINGS).diagnostics] == ["AMP150"]
