"""An autocast's `dtype=` read through a local name bound once to a choice of dtypes
(`amp_dtype = torch.bfloat16 if opt.bf16 else torch.float16`) may be bfloat16
(amplint/analysis/facts/dtype_choices.py -> Region.dtype_choices, read by AMP153).

tests/projects/dtype_choice_yolov7: WongKinYiu/yolov7 layout (train.py train(hyp, opt, device)
wrapping the model in `torch.nn.DataParallel` when several GPUs are visible, models/yolo.py
Model with Detect, utils/loss.py ComputeLoss) in a fork that adds a --bf16 flag for the autocast
dtype. Before, only `dtype=torch.bfloat16 if ... else ...` written in the call was read; through
the local name the region's dtype was unknown and the DataParallel replicas' lost bfloat16 was
not reported. Twins: DDP instead of DataParallel; the name bound to float16 only; a choice
between float16 and float32; a second binding of the name (which value the `with` reads is then
the order's, not read here)."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load

NAME = "dtype_choice_yolov7"
SETTINGS = Settings.default()
CHOICE = "    amp_dtype = torch.bfloat16 if opt.bf16 else torch.float16\n"
TWINS = {
    "ddp": (("model = torch.nn.DataParallel(model)", "model = torch.nn.parallel.DistributedDataParallel(model)"),),
    "float16": ((CHOICE, "    amp_dtype = torch.float16\n"),),
    "no_bfloat16": ((CHOICE, CHOICE.replace("torch.bfloat16", "torch.float32")),),
    "rebound": ((CHOICE, CHOICE + "    if opt.fp16_only:\n        amp_dtype = torch.float16\n"),),
}


def findings(files):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics)


def test_a_local_dtype_choice_holding_bfloat16_reaches_the_dataparallel_check():
    assert findings(load(NAME)) == [(f"{NAME}/train.py", 27, "AMP153")]
    for name, replace in TWINS.items():
        assert findings(load(NAME, replace)) == [], name
