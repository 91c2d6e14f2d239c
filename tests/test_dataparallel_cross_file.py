"""AMP153 across files (amplint/analysis/project/module_entries.py): a model class of another
module wrapped in `nn.DataParallel` (under an `if`) and called under a bfloat16 region.

tests/projects/dp_yolov5_bf16: ultralytics/yolov5 layout (models/yolo.py `Model`, models/common.py
`Conv`, utils/loss.py `ComputeLoss`, train.py with `model = Model(...).to(device)` and the
"DP mode" block `model = torch.nn.DataParallel(model)` under `if cuda and device_count() > 1`).
yolov5 itself uses float16 (`torch.cuda.amp.autocast(amp)`), which DataParallel passes on
correctly; the project makes the region bfloat16, the case the rule is about. The twin applies
autocast in `Model.forward` (the AMP docs' fix), editing models/yolo.py only.
"""

from __future__ import annotations



from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import assert_warm_run_follows_an_edit, load

SETTINGS = Settings.default()
NAME = "dp_yolov5_bf16"
FINDING = (f"{NAME}/train.py", 26, "AMP153")
FORWARD_AUTOCASTS = (
    "    def forward(self, x, augment=False, profile=False, visualize=False):\n",
    "    @torch.autocast('cuda', dtype=torch.bfloat16)\n"
    "    def forward(self, x, augment=False, profile=False, visualize=False):\n",
)


def findings(results):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code == "AMP153")


def test_yolov5_dp_mode_of_a_model_class_of_another_module_under_bfloat16():
    results = lint_project(load(NAME), SETTINGS)
    assert findings(results) == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP153"]
    assert "nn.DataParallel` of `Model` (line 18; the class is defined at models/yolo.py:21)" in message


def test_twin_with_autocast_in_the_model_forward_is_silent():
    files = load(NAME, (FORWARD_AUTOCASTS,))
    assert "@torch.autocast('cuda', dtype=torch.bfloat16)" in files[f"{NAME}/models/yolo.py"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_forward_opening_autocast_through_a_helper_of_its_file_is_silent():
    files = load(NAME, ((
        "    def _forward_once(self, x, profile=False, visualize=False):\n        x = self.backbone(x)\n",
        "    def _forward_once(self, x, profile=False, visualize=False):\n"
        "        with torch.autocast('cuda', dtype=torch.bfloat16):\n            x = self.backbone(x)\n",
    ),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_float16_region_is_silent():
    files = load(NAME, (("dtype=torch.bfloat16, enabled=opt.amp", "dtype=torch.float16, enabled=opt.amp"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_model_class_outside_the_project_is_silent():
    files = load(NAME, (("from models.yolo import Model\n", "from ultralytics.models.yolo import Model\n"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_warm_run_after_editing_only_the_model_file(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "models/yolo.py", (FORWARD_AUTOCASTS,), "AMP153", [("train.py", 26, "AMP153")])