"""`cls` in a classmethod holds its class (issue 26): `cls.train_one_epoch(model, ...)` inside
`Trainer.run` is a call of `Trainer.train_one_epoch`, so what `Trainer.run(model, ...)` is given
reaches the parameter of the method that runs the region. The project is laid out like
espnet/espnet's espnet2: `ASRTask.build_model(args)` (a classmethod builder) makes the
ESPnetASRModel, the trainer's classmethods run it under `autocast(enabled=options.use_amp)`, and
the fork's MultiHeadedAttention masks with -1e10 (AMP110). Missed on main ("parameter `model` of
`Trainer.train_one_epoch`: no call site in the linted files passes a project class")."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
ESPNET = "cls_classmethod_espnet"
HAZARD = ("espnet/nets/pytorch_backend/transformer/attention.py", 21, "AMP110")
FIX = [("scores.masked_fill(mask, -1e10)", "scores.masked_fill(mask, torch.finfo(scores.dtype).min)")]


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def test_a_classmethod_calling_another_through_cls_binds_its_parameters():
    files = load(ESPNET)
    assert findings(files) == [HAZARD]
    assert findings(load(ESPNET, FIX)) == []
    assert build(files).unresolved == []


def test_cls_is_only_the_first_parameter_of_a_classmethod():
    # a staticmethod's parameter named `cls` is an ordinary parameter, bound by no call site here
    files = load(ESPNET, [("    @classmethod\n    def run(cls, model,", "    @staticmethod\n    def run(cls, model,")])
    assert findings(files) == []


def test_another_class_method_of_the_same_name_is_not_called():
    # `cls` is the Trainer: a same-named classmethod of another class does not run
    files = load(ESPNET, [("            cls.train_one_epoch(model,", "            Other.train_one_epoch(model,")])
    files[ESPNET + "/espnet2/train/trainer.py"] += (
        "\n\nclass Other:\n    @classmethod\n    def train_one_epoch(cls, model, iterator, optimizer, scaler, options):\n"
        "        return None\n")
    assert findings(files) == []
