"""AMP150 through a helper of the file: a call under the region that passes the module to a
function or method of the same file whose body runs that parameter forward (`logits =
model(tokens).logits` straight in its body, nothing binding it again, no decorator) is a forward
of the argument in the caller's grad mode (facts/nograd_methods.grad_params). With grad it pairs
with an earlier no-grad forward of the same module in the region and is reported at the helper's
forward; under `torch.no_grad()` it is that no-grad forward.

tests/projects/gradhelper_trlx_ppo is laid out like CarperAI/trlx (trlx/trainer/
accelerate_ppo_trainer.py AcceleratePPOTrainer, trlx/utils/modeling.py, examples/
ppo_sentiments.py), in a fork whose trainer keeps the autocast context a helper of another file
returns on `self`, samples with `generate_samples` (a `@torch.no_grad()` function of that file
that calls the policy), then scores the samples with grad in `self.sequence_logprobs(model, ...)`,
all inside one region. The twin passes `cache_enabled=False`.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "gradhelper_trlx_ppo"
TRAINER = "trlx/trainer/accelerate_ppo_trainer.py"
HELPER_FORWARD = (TRAINER, 15, "AMP150")
FORWARD = "        logits = model(tokens).logits[:, prompt_len - 1 : -1]\n"


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP150", SETTINGS)


def test_the_grad_forward_of_a_helper_after_no_grad_sampling_is_reported_at_the_helper():
    found, results = findings()
    assert found == [HELPER_FORWARD]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150")
    assert "through `self.sequence_logprobs(...)` at line 22, which runs its `model` forward" in message
    assert "through `generate_samples`" in message


def test_the_twin_without_the_autocast_cache_is_silent():
    twin = ('return torch.autocast("cuda", dtype=torch.float16)',
            'return torch.autocast("cuda", dtype=torch.float16, cache_enabled=False)')
    assert findings(twin)[0] == []


def test_a_forward_on_one_branch_of_the_helper_is_not_taken():
    branch = (FORWARD, "        if self.config.score_with_policy:\n    " + FORWARD
              + "        else:\n            logits = self.model(tokens).logits\n")
    assert findings(branch)[0] == []


def test_a_parameter_the_helper_binds_again_is_not_taken():
    rebound = (FORWARD, "        model = getattr(model, 'base_model', model)\n" + FORWARD)
    assert findings(rebound)[0] == []


def test_a_decorated_helper_is_not_taken():
    decorated = ("    def sequence_logprobs(", "    @some_hook\n    def sequence_logprobs(")
    assert findings(decorated)[0] == []


def test_the_helper_called_under_no_grad_is_the_no_grad_forward():
    # a reference pass through the helper, then the policy's own forward with grad
    edit = ("            logprobs = self.sequence_logprobs(model, samples, prompt.shape[1])\n",
            "            with torch.no_grad():\n"
            "                ref_logprobs = self.sequence_logprobs(model, samples, prompt.shape[1])\n"
            "            logprobs = model(samples).logits.sum(-1) - ref_logprobs.sum(-1)\n")
    found, results = findings(edit, ("(model, prompt, self.config.gen_len", "(self.model, prompt, self.config.gen_len"))
    assert found == [(TRAINER, 24, "AMP150")]
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP150")
    assert "through `self.sequence_logprobs(...)`, which runs its `model` forward" in message


# One helper running the module with grad and then under no_grad (facebookresearch/encodec's
# adversarial loss: the fake logits with grad, the real ones without): within one call the grad
# forward comes first, so the weight cache holds no no-grad casts when it runs (L's encodec
# project, found false in round 42).
ADVERSARIAL = (
    "import torch\n"
    "import torch.nn.functional as F\n\n\n"
    "def adversarial_losses(disc, y, y_pred):\n"
    "    logits_fake = disc(y_pred)\n"
    "    with torch.no_grad():\n"
    "        logits_real = disc(y)\n"
    "    return F.relu(1 - logits_fake).mean() + 0 * logits_real.mean()\n\n\n"
    "def main(model, disc, batches):\n"
    "    for y in batches:\n"
    "        with torch.autocast(\"cuda\", dtype=torch.float16):\n"
    "            y_pred = model(y)\n"
    "            adv = adversarial_losses(disc, y, y_pred)\n"
    "        adv.backward()\n"
)


def test_a_helper_running_grad_then_no_grad_is_silent_at_its_call():
    assert code_findings({"probe/losses.py": ADVERSARIAL}, "AMP150", SETTINGS)[0] == []


def test_twin_a_helper_running_no_grad_then_grad_is_reported():
    swapped = ADVERSARIAL.replace(
        "    logits_fake = disc(y_pred)\n    with torch.no_grad():\n        logits_real = disc(y)\n",
        "    with torch.no_grad():\n        logits_real = disc(y)\n    logits_fake = disc(y_pred)\n")
    assert code_findings({"probe/losses.py": swapped}, "AMP150", SETTINGS)[0] == [("losses.py", 8, "AMP150")]


def test_twin_the_region_around_the_loop_is_reported():
    """One region for every batch: the next batch's grad forward follows this one's no-grad."""
    around = ADVERSARIAL.replace(
        "    for y in batches:\n        with torch.autocast(\"cuda\", dtype=torch.float16):\n"
        "            y_pred = model(y)\n            adv = adversarial_losses(disc, y, y_pred)\n"
        "        adv.backward()\n",
        "    with torch.autocast(\"cuda\", dtype=torch.float16):\n        for y in batches:\n"
        "            y_pred = model(y)\n            adv = adversarial_losses(disc, y, y_pred)\n"
        "    adv.backward()\n")
    assert around != ADVERSARIAL
    assert code_findings({"probe/losses.py": around}, "AMP150", SETTINGS)[0] == [("losses.py", 6, "AMP150")]
