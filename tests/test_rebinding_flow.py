"""A value rebound through itself (project/rebinding.py, issue 26): `net = parallelize(net, device)`,
`net = torch.nn.DataParallel(net)`, `self.net = parallelize(self.net, device)`. The class flow cut
the cycle (the value being evaluated held nothing inside its own binding), so the DataParallel a
resolved helper wraps the model in was lost and the bfloat16 region's AMP153 missed.

tests/projects/rebind_pytorch_cifar_dp: kuangliu/pytorch-cifar's layout (main.py building the
model at module level, `def train(epoch)` calling the global `net`, models/resnet.py `ResNet18`,
utils.py `progress_bar`) in a fork that moves the "DataParallel when on CUDA" block into
utils.parallelize and trains under a bfloat16 autocast. The clean twins (a float16 region, a
helper that wraps nothing) are silent."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings

SETTINGS = Settings.default()
NAME = "rebind_pytorch_cifar_dp"
HELPER = ("net = ResNet18()\nnet = parallelize(net, device)\n",)
FLOAT16 = ("dtype=torch.bfloat16", "dtype=torch.float16")
INLINE = (HELPER[0],
          "net = ResNet18()\nnet = net.to(device)\nif device == 'cuda':\n    net = torch.nn.DataParallel(net)\n")


def findings(replace=()):
    return project_findings(lint_project(load(NAME, replace), SETTINGS))


def test_a_model_rebound_through_a_helper_that_wraps_it_in_dataparallel():
    assert findings() == [("main.py", 36, "AMP153")]
    (message,) = [d.message for r in lint_project(load(NAME), SETTINGS).values() for d in r.diagnostics]
    assert "torch.nn.DataParallel(net) at utils.py:19; parallelize(net, device) at main.py:21" in message
    # the clean twins
    assert findings([FLOAT16]) == []
    # a helper that only moves the model: what the rebinding gives is the model, unwrapped
    assert findings([("        net = torch.nn.DataParallel(net)\n", "        net = net.float()\n")]) == []


def test_the_upstream_inline_wrap_at_module_level():
    # pytorch-cifar's own main.py: `net = net.to(device)` then `net = torch.nn.DataParallel(net)`
    assert findings([INLINE]) == [("main.py", 38, "AMP153")]
    assert findings([INLINE, FLOAT16]) == []


def test_a_local_rebound_in_a_builder_function():
    local = (HELPER[0], "def build(device):\n    net = ResNet18()\n    net = parallelize(net, device)\n"
                        "    return net\n\n\nnet = build(device)\n")
    assert findings([local]) == [("main.py", 41, "AMP153")]


def test_an_attribute_rebound_through_the_helper():
    holder = (HELPER[0], "class Holder:\n    def __init__(self):\n        self.net = ResNet18()\n"
                         "        self.net = parallelize(self.net, device)\n\n\nnet = Holder().net\n")
    assert findings([holder]) == [("main.py", 41, "AMP153")]


def test_the_answer_does_not_depend_on_which_question_comes_first():
    questions = [
        (f"{NAME}/utils.py", "parallelize", ("local", "net")),
        (f"{NAME}/main.py", "", ("local", "net")),
        (f"{NAME}/main.py", "train", ("local", "net")),
    ]
    answers = []
    for order in (questions, questions[::-1], questions[1:] + questions[:1]):
        flow = build(load(NAME)).flow
        answers.append({question: flow.values(*question) for question in order})
    assert answers[0] == answers[1] == answers[2]
    held = answers[0][questions[1]][("inst", f"{NAME}/models/resnet.py", "ResNet")]
    assert held.wrap == "torch.nn.DataParallel(net) at utils.py:19"


WITH_LOSS = (
    ("from utils import parallelize, progress_bar", "from utils import ModelWithLoss, parallelize, progress_bar"),
    (HELPER[0], "loss_fn = nn.CrossEntropyLoss()\nnet = ResNet18()\nnet = ModelWithLoss(net, loss_fn)\n"
                "net = torch.nn.DataParallel(net)\n"),
    ("def parallelize(net, device):",
     "class ModelWithLoss(torch.nn.Module):\n    def __init__(self, model, loss):\n        super().__init__()\n"
     "        self.model = model\n        self.loss = loss\n\n    def forward(self, inputs):\n"
     "        return self.model(inputs)\n\n\ndef parallelize(net, device):"),
)


def test_a_wrapper_built_before_the_dataparallel_does_not_hold_the_dataparallel():
    """xingyizhou/CenterNet's ModelWithLoss (src/lib/trains/base_trainer.py: the model and its
    loss in one module, then DataParallel of that), written with one local: `net =
    ModelWithLoss(net, loss_fn)` then `net = torch.nn.DataParallel(net)`. The region's call of
    `net` is the DataParallel (AMP153); the wrapper's own `self.model` is the ResNet the
    constructor was given, never the DataParallel made after it, so its call stays silent."""
    assert findings(WITH_LOSS) == [("main.py", 38, "AMP153")]
    flow = build(load(NAME, WITH_LOSS)).flow
    held = flow.values(f"{NAME}/utils.py", "ModelWithLoss.forward", ("self", "model"))
    assert [thing[2] for thing in held if thing[0] == "inst"] == ["ResNet"]
    assert all(hold.wrap is None for hold in held.values())
    assert findings(WITH_LOSS + (FLOAT16,)) == []
