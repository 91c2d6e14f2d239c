"""AMP140 and AMP141 in a module class that another file makes float16 (issue 26: the rules
read the project's half classes, not only the file's own casts). Shaped like
facebookresearch/fairseq's text-to-speech vocoder: `fairseq/models/text_to_speech/vocoder.py`
holds `self.model = HiFiGANModel(cfg)` and turns it half with the statement
`if fp16: self.model.half()`; the generator's code lives in `hifigan.py`, which casts nothing
itself. The hazards (a peak normalisation with eps 1e-8, a hand-written RMS) are added to that
layout; the clean twin fixes them and must stay silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

SETTINGS = Settings.default()
NAME = "half_fairseq_vocoder"
HIFIGAN = "half_fairseq_vocoder/fairseq/models/text_to_speech/hifigan.py"


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items() for d in result.diagnostics)


def test_eps_and_reduction_in_a_class_another_file_makes_half():
    results = lint_project(load(NAME), SETTINGS)
    assert findings(results) == [(HIFIGAN, 15, "AMP141"), (HIFIGAN, 20, "AMP140")]
    (message,) = [d.message for d in results[HIFIGAN].diagnostics if d.code == "AMP140"]
    assert "vocoder.py" in message  # cites where the class is made float16


def test_clean_twin_is_silent():
    fixed = load(NAME, [("+ 1e-8", "+ torch.finfo(x.dtype).tiny"),
                        ("(x * x).sum(dim=-1).sqrt()", "x.float().pow(2).sum(dim=-1).sqrt()")])
    assert findings(lint_project(fixed, SETTINGS)) == []


def test_without_the_cast_in_the_other_file_nothing_is_float16():
    files = load(NAME, [("        if fp16:\n            self.model.half()\n", "")])
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_bfloat16_cast_is_not_float16():
    files = load(NAME, [("self.model.half()", "self.model.bfloat16()")])
    assert findings(lint_project(files, SETTINGS)) == []
