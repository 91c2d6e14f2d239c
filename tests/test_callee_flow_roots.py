"""A same-file callee of an autocast region runs under it (facts/regions.py: its `inherited`
region), so a call there through a value only the class flow resolves is one of the region's
own calls (project/summary.py `inherited_region`): `with autocast(): loss = forward_step(model,
batch)` and `forward_step` calling `model(tokens, ...)`, `model` the parameter its callers bind.

The project is laid out like EleutherAI/gpt-neox (megatron/training.py's pretrain / train_step /
forward_step, the model passed down as an argument, megatron/model/ with the attention); before,
the region reached nothing outside training.py, in either value-flow mode."""

from __future__ import annotations

from types import SimpleNamespace

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
ON = SimpleNamespace(value_flow=True)
NAME = "flow_neox_forward_step"
HAZARD = ("megatron/model/gpt_model.py", 18, "AMP110")
FIX = [("scores.masked_fill(causal_mask, -1e10)",
        "scores.masked_fill(causal_mask, torch.finfo(scores.dtype).min)")]


def messages(results, code):
    return [d.message for result in results.values() for d in result.diagnostics if d.code == code]


def test_model_called_in_a_same_file_callee_of_the_region_is_reached():
    for config in (None, ON):
        results = lint_project(load(NAME), SETTINGS, config=config)
        assert project_findings(results) == [HAZARD]
        (message,) = messages(results, "AMP110")
        assert "under the autocast region at megatron/training.py:20" in message
        # the twin
        assert project_findings(lint_project(load(NAME, FIX), SETTINGS, config=config)) == []


def test_a_region_that_is_off_or_an_fp32_island_in_the_callee_reaches_nothing():
    off = [('torch.autocast("cuda", dtype=torch.float16)',
            'torch.autocast("cuda", dtype=torch.float16, enabled=False)')]
    assert project_findings(lint_project(load(NAME, off), SETTINGS)) == []
    island = [("    logits = model(tokens, causal_mask(tokens))\n",
               '    with torch.autocast("cuda", enabled=False):\n'
               "        logits = model(tokens, causal_mask(tokens))\n")]
    files = load(NAME, island)
    assert "enabled=False" in files[f"{NAME}/megatron/training.py"]
    assert project_findings(lint_project(files, SETTINGS)) == []


def test_a_callee_no_region_calls_is_not_a_root():
    # forward_step called only outside the region: its model call runs in float32
    outside = [("        loss = forward_step(model, batch)\n",
                "        pass\n    loss = forward_step(model, batch)\n")]
    files = load(NAME, outside)
    assert "    loss = forward_step" in files[f"{NAME}/megatron/training.py"]
    assert project_findings(lint_project(files, SETTINGS)) == []
