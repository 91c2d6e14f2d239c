"""AMP104 and `accumulator.backward(loss)` whose receiver holds an instance of a project class of
another file (project/backward_receivers.py): the call of a project method named `backward` is
that method, not `Tensor.backward`. Silent when every backward the method runs sits under an
autocast it disables itself; else reported at the call, naming the backward it runs.

tests/projects/tinyllama_accumulator_backward is laid out like jzhang38/TinyLlama
(pretrain/tinyllama.py train/main with the micro-step under a bfloat16 autocast, lit_gpt/model.py
GPT, lit_gpt/utils.py chunked_cross_entropy), in a fork without Fabric whose
`fabric.backward(loss / n)` became a `GradientAccumulator` of lit_gpt/utils.py, held in a local
of `train` and in `self.accumulator` of a `Trainer`. As committed the accumulator runs its
backward under `torch.autocast("cuda", enabled=False)` (the clean twin); the edit makes the
hazard.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "tinyllama_accumulator_backward"
TRAIN = "pretrain/tinyllama.py"
PROTECTED = ('        with torch.autocast("cuda", enabled=False):\n'
             "            (loss / self.steps).backward()\n")
PLAIN = "        if self.steps:\n            (loss / self.steps).backward()\n"


def _run(*edits):
    found, results = code_findings(load(NAME, edits), "AMP104", SETTINGS)
    messages = [d.message for result in results.values() for d in result.diagnostics if d.code == "AMP104"]
    return found, messages


def test_a_project_backward_method_that_disables_autocast_is_not_tensor_backward():
    assert _run() == ([], [])


def test_a_project_backward_method_under_the_region_is_reported_at_the_call_naming_its_backward():
    found, messages = _run((PROTECTED, PLAIN))
    assert found == [(TRAIN, 20, "AMP104"), (TRAIN, 36, "AMP104")]
    assert all("(at lit_gpt/utils.py:22, through this call;" in m for m in messages), messages


def test_a_second_backward_outside_the_disabled_block_is_reported():
    found, messages = _run((PROTECTED, PROTECTED + "        loss.backward()\n"))
    assert found == [(TRAIN, 20, "AMP104"), (TRAIN, 36, "AMP104")]
    assert all("(at lit_gpt/utils.py:23, through this call;" in m for m in messages), messages


def test_a_receiver_that_is_not_the_accumulator_is_still_tensor_backward():
    found, messages = _run(("            accumulator.backward(loss)\n",
                            "            accumulator.backward(loss)\n            loss.backward()\n"))
    assert found == [(TRAIN, 21, "AMP104")]
