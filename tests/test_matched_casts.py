"""A half cast taken only when the test reads another value's dtype is no evidence of half
(flowvalues.ValueReader._matched_cast, FlowCollector._matched_arm and their `ast` twins).
ultralytics (THU-MIG/yolov10) `utils/torch_utils.profile` runs `m = m.half() if hasattr(m,
"half") and isinstance(x, torch.Tensor) and x.dtype is torch.float16 else m` while autobatch
hands it float32 inputs: the module follows the input, which nothing makes half. The project,
tests/projects/matched_cast_ultralytics, is our own code shaped like that path: autobatch
profiles a PromptEncoder whose forward pads with a `torch.zeros` without `dtype=`."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

PROJECT = "matched_cast_ultralytics"
PROFILE = PROJECT + "/ultralytics/utils/torch_utils.py"
MATCHED = 'hasattr(m, "half") and isinstance(x, torch.Tensor) and x.dtype is torch.float16'
PAD_ZEROS = ("ultralytics/nn/prompt.py", 11, "AMP101")


def findings(files):
    return project_findings(lint_project(files, Settings.default()), skip=("AMP130",))


def with_test(test, params=""):
    files = load(PROJECT)
    assert MATCHED in files[PROFILE]
    files[PROFILE] = files[PROFILE].replace(MATCHED, test).replace("device=None)", f"device=None{params})")
    return files


def test_cast_matched_to_another_values_dtype_is_no_half_evidence():
    assert findings(load(PROJECT)) == []
    # the statement form, in place or kept: `if x.dtype is torch.float16: m.half()`
    for cast in ("m.half()", "m = m.half()"):
        assert findings(statement_form(cast, "x.dtype is torch.float16")) == []
        assert findings(statement_form(cast, "half", ", half=True")) == [PAD_ZEROS]
    # the twin keeps the hazard: `m.half() if half else m` with `half=True` casts the module
    assert findings(with_test("half", ", half=True")) == [PAD_ZEROS]
    # a test of the cast module's own dtype (through a call, or its name) is no other value's
    assert findings(with_test("next(m.parameters()).dtype is torch.float32")) == [PAD_ZEROS]
    assert findings(with_test("m.dtype is torch.float32")) == [PAD_ZEROS]


def statement_form(cast, test, params=""):
    files = load(PROJECT)
    line = f"            m = m.half() if {MATCHED} else m\n"
    assert line in files[PROFILE]
    files[PROFILE] = files[PROFILE].replace(line, f"            if {test}:\n                {cast}\n").replace(
        "device=None)", f"device=None{params})")
    return files
