"""A BCELoss instance is the one the call can see: a `loss_fn` local to another function is not
the `loss_fn` a nested training step reads (found reading fresh real trees, r20-realread: AMP102
in NVIDIA/DeepLearningExamples PyTorch/Recommendation/DLRM dlrm/scripts/main.py:590, where
`main` binds `loss_fn = torch.nn.BCEWithLogitsLoss()` read by its nested `forward_backward`
under autocast, and `dist_evaluate` binds its own `loss_fn = torch.nn.BCELoss()`, called
outside autocast on sigmoid scores).

tests/projects/bce_scope_dlrm: DLRM layout (dlrm/scripts/main.py, dlrm/model/dlrm.py).
AMP102 now keeps, for a bare name, the assignments in the scope whose binding the call sees
(facts/names.py `binding_scope`, moved there from facts/scaler_flags.py); `self.x` and names a
scope declares global/nonlocal keep every assignment, as before. Twins, reported: `main`'s own
loss a BCELoss, the evaluation's BCELoss called under its autocast, a module-level BCELoss a
nested function reads, a BCELoss rebound through `global`.
"""

from __future__ import annotations

from project_files import code_findings, load

DLRM = "bce_scope_dlrm"
MAIN = "dlrm/scripts/main.py"


def amp102(name, *edits):
    return code_findings(load(name, edits), "AMP102")[0]


def amp102_file(source):
    return code_findings({"proj/main.py": source}, "AMP102")[0]


def test_another_functions_bce_loss_is_not_the_nested_steps_loss():
    assert amp102(DLRM) == []


def test_twin_the_enclosing_functions_own_bce_loss_is_reported():
    edit = ('loss_fn = torch.nn.BCEWithLogitsLoss(reduction="mean")',
            'loss_fn = torch.nn.BCELoss(reduction="mean")')
    assert amp102(DLRM, edit) == [(MAIN, 15, "AMP102")]


def test_twin_the_evaluations_bce_loss_under_its_autocast_is_reported():
    edit = ("                output = model(numerical_features).squeeze()\n",
            "                output = model(numerical_features).squeeze()\n"
            "                print(loss_fn(torch.sigmoid(output), click))\n")
    assert amp102(DLRM, edit) == [(MAIN, 34, "AMP102")]


METHODS = (
    "import torch\n"
    "class Trainer:\n"
    "    def fit(self, model, x, y):\n"
    "        crit = torch.nn.BCEWithLogitsLoss()\n"
    "        with torch.autocast('cuda'):\n"
    "            return crit(model(x), y)\n"
    "    def score(self, probs, y):\n"
    "        crit = torch.nn.BCELoss()\n"
    "        return crit(probs, y)\n"
)


def test_a_methods_local_is_not_another_methods_local():
    assert amp102_file(METHODS) == []
    swapped = METHODS.replace("BCEWithLogitsLoss()", "BCELoss()", 1)
    assert amp102_file(swapped) == [("main.py", 6, "AMP102")]


MODULE_LEVEL = (
    "import torch\n"
    "criterion = torch.nn.BCELoss()\n"
    "def train(model, x, y):\n"
    "    def step():\n"
    "        with torch.autocast('cuda'):\n"
    "            return criterion(torch.sigmoid(model(x)), y)\n"
    "    return step()\n"
    "def evaluate(p, y):\n"
    "    criterion = torch.nn.BCEWithLogitsLoss()\n"
    "    return criterion(p, y)\n"
)


def test_a_module_level_loss_a_nested_function_reads_is_reported():
    assert amp102_file(MODULE_LEVEL) == [("main.py", 6, "AMP102")]


def test_a_loss_rebound_through_global_is_reported():
    source = (
        "import torch\n"
        "criterion = None\n"
        "def setup():\n"
        "    global criterion\n"
        "    criterion = torch.nn.BCELoss()\n"
        "def train(model, x, y):\n"
        "    with torch.autocast('cuda'):\n"
        "        return criterion(model(x), y)\n"
    )
    assert amp102_file(source) == [("main.py", 8, "AMP102")]
