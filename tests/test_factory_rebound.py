"""AMP101 on a factory whose local is rebound to a cast of itself (amplint/analysis/facts/
value_meets.py `cast_where_rebound`).

tests/projects/half_llama_mask: meta-llama/llama layout (example_chat_completion.py calls
`Llama.build` of llama/generation.py, which turns the `Transformer` of llama/model.py half with
`model.half().cuda()`). `Transformer.forward` builds the causal mask as meta-llama does:
`mask = torch.full(..., float("-inf"), device=tokens.device)` then
`mask = torch.triu(mask, diagonal=...).type_as(h)`. The float32 value is cast to the half
tensor's dtype before anything reads it: nothing to report. Twins: the rebinding without the
cast, or with `.float()` (the mask stays float32 and upcasts `scores` in Attention): reported.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "half_llama_mask"
CAST = ".type_as(h)\n"
FINDING = (f"{NAME}/llama/model.py", 65, "AMP101")


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code == "AMP101")


def test_llama_mask_cast_where_rebound_is_silent():
    files = load(NAME)
    assert CAST in files[f"{NAME}/llama/model.py"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_twin_rebound_without_a_cast_is_reported():
    results = lint_project(load(NAME, ((CAST, "\n"),)), SETTINGS)
    assert findings(results) == [FINDING]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP101"]
    assert "(Transformer(args) at llama/generation.py:15 made float16" in diag.message


def test_twin_rebound_to_float_is_reported():
    assert findings(lint_project(load(NAME, ((CAST, ".float()\n"),)), SETTINGS)) == [FINDING]


def test_twin_read_before_the_cast_is_reported():
    # the float32 mask is read (mixed with `h`) between the two bindings
    files = load(NAME, (("            mask = torch.triu(",
                         "            h = h + mask\n            mask = torch.triu("),))
    assert findings(lint_project(files, SETTINGS)) == [FINDING]
