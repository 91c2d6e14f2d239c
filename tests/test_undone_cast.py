"""A half cast undone by the very next statement makes no half model (the class flow's half
instances, project/half_inplace.py `undone_at_once`, read by every rule that asks which project
classes are made half: AMP101 and AMP110 here).

tests/projects/undone_cast_fairscale: facebookresearch/fairscale layout (fairscale/nn/data_parallel
with a wrapper that forwards `.to()` to its module, fair_dev/testing/testing.py with a small GPT2,
tests/nn/data_parallel/test_sharded_ddp_features.py): the test trains the wrapped GPT2 and, after
each step, checks that the wrapper changes dtype and back, `ddp_model.to(device=device,
dtype=torch.float16)` then `ddp_model.to(device=device, dtype=torch.float32)`. No forward sees
the module half, so GPT2's float32 `torch.ones(...)` and its `-1e9` fill are fine. Twins: the
cast back left out, a forward between the two casts, the cast back under an `if`.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "undone_cast_fairscale"
TEST = "tests/nn/data_parallel/test_sharded_ddp_features.py"
BACK = "        ddp_model.to(device=device, dtype=torch.float32)\n"
HALF = "        ddp_model.to(device=device, dtype=torch.float16)\n"
REPORTED = [("fair_dev/testing/testing.py", 15, "AMP101"), ("fair_dev/testing/testing.py", 18, "AMP110")]


def findings(files):
    return sorted(f for code in ("AMP101", "AMP110") for f in code_findings(files, code)[0])


def test_a_half_cast_undone_by_the_next_statement_makes_nothing_half():
    assert findings(load(NAME)) == []


def test_twin_without_the_cast_back_both_rules_report():
    assert findings(load(NAME, ((BACK, ""),))) == REPORTED


def test_twin_a_forward_between_the_two_casts_runs_half():
    between = HALF + "        ddp_model(tokens, mask)\n"
    assert findings(load(NAME, ((HALF, between),))) == REPORTED


def test_twin_a_cast_back_under_an_if_may_not_run():
    guarded = "        if steps > 1:\n    " + BACK
    assert findings(load(NAME, ((BACK, guarded),))) == REPORTED


def test_half_then_rebound_to_float_and_a_chained_cast():
    rebound = load(NAME, ((HALF, "        ddp_model.cuda().half()\n"),
                          (BACK, "        ddp_model = ddp_model.float()\n")))
    assert findings(rebound) == []
    other = load(NAME, ((HALF, "        ddp_model.half()\n"), (BACK, "        model.float()\n")))
    assert findings(other) == REPORTED  # another receiver: the wrapper stays half


def test_a_second_instance_cast_half_in_another_test_still_counts():
    """The class flow is per class: a wrapper made half elsewhere (not undone) makes what it
    wraps half, as before (fairscale's `test_device_change` wraps a Sequential; with the GPT2
    wrapped there too the finding stands)."""
    second = ("import torch\n\nfrom fair_dev.testing.testing import GPT2\n"
              "from fairscale.nn.data_parallel.sharded_ddp import ShardedDataParallel\n\n\n"
              "def run_test_half(device):\n"
              "    ddp_model = ShardedDataParallel(GPT2(embed_dim=8, num_vocab=16), None)\n"
              "    ddp_model.to(device=device, dtype=torch.float16)\n")
    files = {**load(NAME), f"{NAME}/tests/nn/data_parallel/test_half.py": second}
    assert findings(files) == REPORTED
