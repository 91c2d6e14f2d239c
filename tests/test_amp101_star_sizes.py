"""AMP101 on a factory whose sizes come starred: `torch.zeros(*x.shape[:-1], n, device=...)`.
`torch.zeros/ones/empty/rand/randn` take their sizes positionally and `dtype` only by keyword, so
`*sizes` cannot set the dtype: the call makes float32 as one with sizes written out does.
`**kwargs` may pass `dtype=`, and a starred `torch.tensor(*args)` / `torch.full(*args)` may pass
the data or fill value that decides it: those stay unknown (silent).

tests/projects/factory_peft_mixed_batch: huggingface/peft layout (src/peft/tuners/lora/layer.py
`LoraLinear._mixed_batch_forward`, re-exported by src/peft/tuners/lora/__init__.py, and an
examples/ script for mixed adapter batches) in a fork whose mixed batch forward collects the LoRA
outputs in a buffer of its own, sized `*x.shape[:-1]`; the script runs the layer under a float16
autocast, so the half LoRA output is written by row index into the float32 buffer. Twins: the
buffer made with `torch.zeros_like(result)`; its sizes and dtype from `**kwargs`.
"""

from __future__ import annotations

from project_files import code_findings, load

from amplint.analysis.engine import Settings, lint_source

NAME = "factory_peft_mixed_batch"
BUFFER = "        lora_out = torch.zeros(*x.shape[:-1], self.out_features, device=x.device)\n"
FINDING = ("src/peft/tuners/lora/layer.py", 17, "AMP101")


def amp101(files):
    return code_findings(files, "AMP101")[0]


def test_starred_sizes_make_float32_written_by_rows_under_autocast():
    assert amp101(load(NAME)) == [FINDING]


def test_twin_buffer_like_the_result_is_silent():
    files = load(NAME, ((BUFFER, "        lora_out = torch.zeros_like(result)\n"),))
    assert amp101(files) == []


def test_twin_keyword_arguments_that_may_pass_dtype_are_silent():
    files = load(NAME, ((BUFFER, "        lora_out = torch.zeros(*x.shape[:-1], self.out_features, **self.factory_kwargs)\n"),))
    assert amp101(files) == []


SOURCE = """import torch

def route(x, w, rows, args):
    with torch.autocast("cuda", dtype=torch.float16):
        buf = {factory}
        buf[rows] = torch.mm(x[rows], w)
    return buf
"""


def codes(factory):
    result = lint_source("route.py", SOURCE.format(factory=factory), Settings(frozenset({"AMP101"})))
    return [(d.code, d.line) for d in result.diagnostics]


def test_starred_sizes_in_one_file():
    assert codes("torch.empty(*x.shape[:-1], w.shape[1])") == [("AMP101", 5)]
    assert codes("torch.randn(*args, device=x.device)") == [("AMP101", 5)]


def test_starred_data_or_fill_value_is_not_known():
    assert codes("torch.full(*args)") == []
    assert codes("torch.tensor(*args)") == []
