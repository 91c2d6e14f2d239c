"""A name read inside one arm of an `if` holds only what that arm (and the code before the `if`)
binds, never what a sibling arm binds (arm_locals.py, read by both flow collectors).
ultralytics (THU-MIG/yolov10) `cfg/__init__.py` `entrypoint` binds `model = SAM(model)` and
`model = YOLO(model, task=task)` in sibling arms; read flow-insensitively, `YOLO(model)` was
handed the SAM instance, which then sat in every half YOLO's `self.model`. The project,
tests/projects/arm_locals_ultralytics, is our own code shaped like that path: the exporter
halves a YOLO, and SAM's forward pads with a `torch.zeros` without `dtype=`."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

PROJECT = "arm_locals_ultralytics"
ENTRY = PROJECT + "/ultralytics/cfg/__init__.py"
SAM_PAD = ("ultralytics/models/sam.py", 14, "AMP101")
YOLO_ARM = """    else:
        from ultralytics import YOLO

        model = YOLO(model, task=overrides.get("task"))
"""


def findings(files):
    return project_findings(lint_project(files, Settings.default()), skip=("AMP130",))


def entry(old, new):
    files = load(PROJECT)
    assert old in files[ENTRY]
    files[ENTRY] = files[ENTRY].replace(old, new)
    return files


def test_sibling_arm_binding_never_reaches_a_read_in_another_arm():
    assert findings(load(PROJECT)) == []
    # the twin: YOLO built after the `if`, around whatever the arm bound (SAM included)
    after = entry(YOLO_ARM, "    from ultralytics import YOLO\n\n    model = YOLO(model)\n")
    assert findings(after) == [SAM_PAD]
    # nor inside a loop: on its next pass the other arm's binding reaches the read
    assert findings(looped()) == [SAM_PAD]


def test_cast_in_an_arm_converts_that_arms_model_only():
    # `model.half()` in the YOLO arm converts the YOLO, not the SAM the other arm made
    inside = entry(YOLO_ARM, YOLO_ARM + "        model.half()\n")
    assert findings(inside) == []
    # the twin: the same cast after the `if` may convert the SAM
    after = entry("    with torch.no_grad():", "    model.half()\n    with torch.no_grad():")
    assert findings(after) == [SAM_PAD]


def looped():
    files = load(PROJECT)
    text = files[ENTRY]
    body = text[text.index("    if \"sam\" in stem:"):text.index("    with torch.no_grad():")]
    files[ENTRY] = text.replace(body, "    for _ in range(2):\n" + "".join(
        "    " + line if line.strip() else line for line in body.splitlines(True)))
    assert "        if \"sam\" in stem:" in files[ENTRY]
    return files
