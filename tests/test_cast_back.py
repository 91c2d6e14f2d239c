"""A half model cast back to float32 before it runs or trains is no half model
(amplint/analysis/facts/cast_back.py, read by AMP103 and AMP152; the project pass's side for
AMP103's returned casts: project/half_inplace.py `floated_between` / `floated_on_return`).

tests/projects/returned_half_realesrgan: xinntao/Real-ESRGAN layout (realesrgan/utils.py with
the generator and the `RealESRGANer` helper, scripts beside it), fine-tuned by scripts of the
kind its users write: finetune.py gets the fp16 deployment copy from `upsampler.export()`, casts
it back with `net_g = net_g.float()` and trains it under `torch.autocast` with a GradScaler;
tune_plain.py gets the fp16 generator from `build_generator(...)`, casts it back and trains it
with a plain Adam. Both train float32 weights. Twins: the cast back left out (AMP103 / AMP152
reported), the cast back after the training loop or under an `if` (may not run: reported).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "returned_half_realesrgan"
EXPORT = ("returned_half_realesrgan/realesrgan/utils.py", 25, "AMP103")
PLAIN = ("returned_half_realesrgan/tune_plain.py", 8, "AMP152")
BACK = "    net_g = net_g.float()\n"
LOOP = "    for lq, gt in loader:\n"


def findings(files):
    found = []
    for code in ("AMP103", "AMP152"):
        found += [(f"{NAME}/{p}", line, c) for p, line, c in code_findings(files, code)[0]]
    return sorted(found)


def test_the_cast_back_makes_both_models_float32_again():
    assert findings(load(NAME)) == []


def test_twin_without_the_cast_back_is_reported_by_both_rules():
    assert findings(load(NAME, ((BACK, ""),))) == [EXPORT, PLAIN]


def test_the_cast_back_chained_on_the_call_and_through_to():
    chained = load(NAME, ((BACK, ""), ("net_g = upsampler.export()\n", "net_g = upsampler.export().float()\n"),
                          ("net_g = build_generator(args.model_path)\n",
                           "net_g = build_generator(args.model_path).cuda().float()\n")))
    assert findings(chained) == []
    to = load(NAME, ((BACK, "    net_g = net_g.to(torch.float32)\n"),))
    assert findings(to) == []
    in_place = load(NAME, ((BACK, "    net_g.cuda().float()\n"),))
    assert findings(in_place) == []


def test_twin_a_cast_back_to_half_again_or_one_after_the_training_is_reported():
    again = load(NAME, (("net_g = upsampler.export()\n", "net_g = upsampler.export().float().half()\n"),
                        (BACK, "")))
    assert ("returned_half_realesrgan/finetune.py", 9, "AMP103") in findings(again)  # the caller's own cast
    after = load(NAME, ((BACK, ""), ("        scaler.update()\n", "        scaler.update()\n    net_g.float()\n"),
                        ("        optimizer.step()\n", "        optimizer.step()\n    net_g = net_g.float()\n")))
    assert findings(after) == [EXPORT, PLAIN]


def test_twin_a_cast_back_under_an_if_may_not_run():
    files = load(NAME, ((BACK, "    if args.fp32:\n        net_g = net_g.float()\n"),))
    assert findings(files) == [EXPORT, PLAIN]


def test_a_module_level_script_a_third_file():
    script = ("import torch\nfrom realesrgan import RealESRGANer\n\n"
              "net = RealESRGANer(4, 'w.pth').export()\nnet = net.float()\n"
              "with torch.autocast('cuda'):\n    y = net(torch.randn(1, 3, 8, 8))\n")
    files = load(NAME, ((BACK, ""),))
    files = {p: t for p, t in files.items() if not p.endswith(("finetune.py", "tune_plain.py"))}
    assert findings({**files, f"{NAME}/scripts/tune.py": script}) == []
    half = script.replace("net = net.float()\n", "")
    assert findings({**files, f"{NAME}/scripts/tune.py": half}) == [EXPORT]


SAME_FILE = """import torch
from torch import nn


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def export(self):
        return self.net.half()


def build(dim):
    model = nn.Linear(dim, dim)
    return model.half()


def own(x):
    model = nn.Linear(4, 4).half()
    model = model.float()
    with torch.autocast("cuda"):
        return model(x)


def built(x):
    model = build(4)
    model = model.float()
    with torch.autocast("cuda"):
        return model(x)


def exported(x):
    model = Wrapper().export()
    model.float()
    with torch.autocast("cuda"):
        return model(x)
"""


def test_one_file_own_cast_builder_and_method_cast_back_before_the_region():
    assert code_findings({"p/m.py": SAME_FILE}, "AMP103")[0] == []
    twin = SAME_FILE.replace("    model = model.float()\n", "").replace("    model.float()\n", "")
    assert [line for _p, line, _c in code_findings({"p/m.py": twin}, "AMP103")[0]] == [11, 16, 20]


PLAIN_ONE = """import torch
from torch import nn


def train(x, y):
    model = nn.Linear(4, 4).half()
    model = model.float()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""


def test_one_file_plain_training_after_the_cast_back():
    assert code_findings({"p/m.py": PLAIN_ONE}, "AMP152")[0] == []
    twin = PLAIN_ONE.replace("    model = model.float()\n", "")
    assert [line for _p, line, _c in code_findings({"p/m.py": twin}, "AMP152")[0]] == [6]
    late = PLAIN_ONE.replace("    model = model.float()\n", "").replace("    opt.step()\n", "    opt.step()\n    model.float()\n")
    assert [line for _p, line, _c in code_findings({"p/m.py": late}, "AMP152")[0]] == [6]


def test_torch_a_module_cast_back_holds_float32_weights_and_runs_so_under_autocast():
    import pytest

    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(4, 4).half()
    same = net.float()  # in place: the module itself, float32 again
    assert same is net and net.weight.dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = net(torch.randn(2, 4))
    assert out.dtype == torch.bfloat16 and net.weight.dtype == torch.float32


TENSOR = """import torch


def step(model, x):
    x = x.half()
    x.float()
    with torch.autocast("cuda"):
        return model(x)
"""


def test_a_tensor_statement_float_is_no_cast_back_its_rebinding_is():
    """`x.float()` as a statement returns a new tensor and leaves `x` half (torch: below);
    `x = x.float()` rebinds it."""
    assert [line for _p, line, _c in code_findings({"p/m.py": TENSOR}, "AMP103")[0]] == [5]
    rebound = TENSOR.replace("    x.float()\n", "    x = x.float()\n")
    assert code_findings({"p/m.py": rebound}, "AMP103")[0] == []


def test_torch_a_tensor_statement_float_leaves_it_half():
    import pytest

    torch = pytest.importorskip("torch")
    x = torch.randn(2).half()
    x.float()
    assert x.dtype == torch.float16
