"""Tier-2 autograd/parallel rules (AMP150-AMP153): look-alikes beyond each rule's own examples,
the fix's edge cases, and the rules' presence in the listing and docs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.rules import all_rules

CODES = ("AMP150", "AMP151", "AMP152", "AMP153")


def codes(source: str, code: str):
    result = lint_source("t.py", source, Settings(frozenset({code})))
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics]


def fixed(source: str, code: str):
    return lint_source("t.py", source, Settings(frozenset({code})), fix=True).fixed_source


@pytest.mark.parametrize("code", CODES)
def test_listed_documented_and_on_by_default(code):
    rule = all_rules()[code]
    listing = CliRunner().invoke(cli, ["--list-rules"]).output
    assert code in listing and rule.name in listing
    docs = CliRunner().invoke(cli, ["--explain", code]).output
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead",
                    "## Fix safety"):
        assert heading in docs
    assert code in Settings.default().select


# -- AMP150 ---------------------------------------------------------------------------------
def test_amp150_two_grad_forwards_one_fix():
    src = (
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    a = model(y)\n"
        "    b = model(z)\n"
        "    c = model.module(w)\n"
    )
    assert codes(src, "AMP150") == ["AMP150"]  # one report per module and region
    out = fixed(src, "AMP150")
    assert "torch.autocast('cuda', cache_enabled=False)" in out
    assert fixed(out, "AMP150") is None


def test_amp150_set_grad_enabled_false_counts_unknown_flag_does_not():
    src = (
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.set_grad_enabled(False):\n"
        "        t = self_model(x)\n"
        "    out = self_model(y)\n"
    )
    assert codes(src, "AMP150") == ["AMP150"]
    unknown = src.replace("set_grad_enabled(False)", "set_grad_enabled(is_train)")
    assert codes(unknown, "AMP150") == []


def test_amp150_enable_grad_inside_no_grad_and_no_grad_decorated_function():
    # a grad forward re-enabled inside no_grad is still a grad forward
    src = (
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "        with torch.enable_grad():\n"
        "            out = model(y)\n"
    )
    assert codes(src, "AMP150") == ["AMP150"]
    # a @torch.no_grad() evaluation function: every forward in it is without grad
    evaluation = (
        "import torch\n"
        "@torch.no_grad()\n"
        "def evaluate(model, x):\n"
        "    with torch.autocast('cuda'):\n"
        "        with torch.no_grad():\n"
        "            a = model(x)\n"
        "        return model(x)\n"
    )
    assert codes(evaluation, "AMP150") == []


def test_amp150_try_except_branches_exclusive_and_partial_region_unfixed():
    src = (
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    try:\n"
        "        with torch.no_grad():\n"
        "            out = model(x)\n"
        "    except RuntimeError:\n"
        "        out = model(x)\n"
    )
    assert codes(src, "AMP150") == []
    partial = (
        "import torch\n"
        "from functools import partial\n"
        "amp = partial(torch.autocast, 'cuda', dtype=torch.bfloat16)\n"
        "with amp():\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    out = model(y)\n"
    )
    assert codes(partial, "AMP150") == ["AMP150"]
    assert fixed(partial, "AMP150") is None


def test_amp150_multiline_call_keeps_trailing_comma_style():
    src = (
        "import torch\n"
        "with torch.autocast(\n"
        "    device_type='cuda',\n"
        "    dtype=torch.bfloat16,\n"
        "):\n"
        "    with torch.no_grad():\n"
        "        t = model(x)\n"
        "    out = model(y)\n"
    )
    out = fixed(src, "AMP150")
    compile(out, "t.py", "exec")
    assert "cache_enabled=False" in out and fixed(out, "AMP150") is None


# -- AMP151 ---------------------------------------------------------------------------------
FN = (
    "import torch\n"
    "class F(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, a, b):\n"
    "        ctx.save_for_backward(a, b)\n"
    "        return torch.matmul(a, b)\n"
    "    @staticmethod\n"
    "    def backward(ctx, g):\n"
    "        a, b = ctx.saved_tensors\n"
    "        return g @ b.T, a.T @ g\n"
)


def test_amp151_self_alias_and_inherited_region():
    src = FN + (
        "class Layer(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fn = F.apply\n"
        "    def forward(self, a, b):\n"
        "        return self.fn(a, b)\n"
        "layer = Layer()\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    y = layer(a, b)\n"
    )
    assert codes(src, "AMP151") == ["AMP151"]


def test_amp151_silent_outside_region_and_for_unknown_classes():
    assert codes(FN + "y = F.apply(a, b)\n", "AMP151") == []
    other = (
        "import torch\n"
        "from ops import Fused\n"
        "with torch.autocast('cuda'):\n"
        "    y = Fused.apply(a, b)\n"
    )
    assert codes(other, "AMP151") == []


def test_amp151_deprecated_decorators_accepted():
    src = FN.replace(
        "    def forward", "    @torch.cuda.amp.custom_fwd\n    def forward"
    ).replace("    def backward", "    @torch.cuda.amp.custom_bwd\n    def backward")
    src += "with torch.autocast('cuda'):\n    y = F.apply(a, b)\n"
    assert codes(src, "AMP151") == []


# -- AMP152 ---------------------------------------------------------------------------------
HALF_TRAIN = (
    "import torch\n"
    "model = Net().cuda().half()\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x, y in loader:\n"
    "    loss_fn(model(x), y).backward()\n"
    "    opt.step()\n"
)


def test_amp152_flags_and_param_groups():
    assert codes(HALF_TRAIN, "AMP152") == ["AMP152"]
    groups = HALF_TRAIN.replace(
        "model.parameters()", "[{'params': model.parameters(), 'lr': 0.1}]"
    )
    assert codes(groups, "AMP152") == ["AMP152"]


def test_amp152_silent_with_autocast_scaler_or_no_step():
    with_autocast = HALF_TRAIN.replace(
        "    loss_fn(model(x), y).backward()\n",
        "    with torch.autocast('cuda'):\n        loss = loss_fn(model(x), y)\n    loss.backward()\n",
    )
    assert codes(with_autocast, "AMP152") == []  # AMP103's business
    with_scaler = HALF_TRAIN + "scaler = torch.amp.GradScaler('cuda')\n"
    assert codes(with_scaler, "AMP152") == []
    no_step = HALF_TRAIN.replace("    opt.step()\n", "")
    assert codes(no_step, "AMP152") == []


def test_amp152_scheduler_is_not_an_optimizer():
    src = (
        "import torch\n"
        "model = Net().half()\n"
        "sched = torch.optim.lr_scheduler.StepLR(opt, 10)\n"
        "sched.step()\n"
    )
    assert codes(src, "AMP152") == []


# -- AMP153 ---------------------------------------------------------------------------------
DP = (
    "import torch\n"
    "from torch import nn\n"
    "class Net(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n"
    "model = Net().cuda()\n"
)


def test_amp153_float16_and_cpu_regions_are_silent():
    src = DP + "dp = nn.DataParallel(model)\nwith torch.autocast('cuda'):\n    y = dp(x)\n"
    assert codes(src, "AMP153") == []
    cpu = DP + (
        "dp = nn.DataParallel(model)\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    y = dp(x)\n"
    )
    assert codes(cpu, "AMP153") == []


def test_amp153_call_before_wrapping_is_the_bare_model():
    src = DP + (
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    y = model(x)\n"
        "model = nn.DataParallel(model)\n"
    )
    assert codes(src, "AMP153") == []
    after = DP + (
        "model = nn.DataParallel(model)\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    y = model(x)\n"
    )
    assert codes(after, "AMP153") == ["AMP153"]


def test_amp153_autocast_in_a_submodule_called_by_forward_counts():
    src = (
        "import torch\n"
        "from torch import nn\n"
        "class Inner(nn.Module):\n"
        "    @torch.autocast('cuda', dtype=torch.bfloat16)\n"
        "    def forward(self, x):\n"
        "        return x\n"
        "class Outer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.inner = Inner()\n"
        "    def forward(self, x):\n"
        "        return self.inner(x)\n"
        "dp = nn.DataParallel(Outer())\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    y = dp(x)\n"
    )
    assert codes(src, "AMP153") == []
