"""A half model passed as an argument (issue 26, project/half_param_flow.py): a parameter every
call site binds to a model its caller halved holds that model, through parameters that pass it
on, into methods of a held instance, same file and across files; calling it (`model(x)`,
`model.encode_image(x)`) yields float16 there, and AMP141 reads the callee as float16 code.

tests/projects/args_openclip_zeroshot: mlfoundations/open_clip layout (src/training/main.py
builds the model with `open_clip.factory.create_model`, halves it in place for a pure float16
evaluation and calls `evaluate(model, data, epoch, args)` of training/train.py, which hands it to
`zero_shot_eval` of training/zero_shot.py, which passes it to `ZeroShotEvaluator.run` of a held
instance; `run` normalises `model.encode_image(images)` through its private `_normalize`, a
hand-written norm). Proven on CPU (torch 2.13): with features of magnitude 12 over 512 channels
the half model's normalised features are all zero (the sum of squares is inf); the float32 twin
gives unit norms. Twins: the model left float32; halved only after the evaluation; a second
caller evaluating a float32 model (not every call agrees); the norm squared in float32; the
parameter rebound in `run`."""

from __future__ import annotations

import os
import sys

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load

NAME = "args_openclip_zeroshot"
SETTINGS = Settings.default()
FINDING = (f"{NAME}/src/training/zero_shot.py", 10, "AMP141")
NO_HALF = ("    model.half()\n", "")
HALF_AFTER = ("    model.half()\n    data = {\"imagenet-val\": build_loader(args)}\n    metrics = evaluate(model, data, 0, args)\n",
              "    data = {\"imagenet-val\": build_loader(args)}\n    metrics = evaluate(model, data, 0, args)\n    model.half()\n")
SECOND_CALLER = ("    metrics = evaluate(model, data, 0, args)\n",
                 "    metrics = evaluate(model, data, 0, args)\n    reference = create_model(args.model)\n"
                 "    evaluate(reference, data, 0, args)\n")
FLOAT_NORM = ("features.pow(2).sum(", "features.float().pow(2).sum(")
REBOUND = ("    def run(self, model, dataloader):\n",
           "    def run(self, model, dataloader):\n        model = model.float()\n")


def findings(files, code="AMP141"):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS).items()
                  for d in result.diagnostics if d.code == code)


def test_a_half_model_passed_on_into_a_method_is_float16_code():
    results = lint_project(load(NAME), SETTINGS)
    found = [(path, d) for path, r in results.items() for d in r.diagnostics]
    assert [(path, d.line, d.code) for path, d in found] == [FINDING]
    message = found[0][1].message
    assert "`model`, cast to float16 in training/main.py at line 25" in message
    assert "passed to `ZeroShotEvaluator.run` at training/zero_shot.py:36" in message


@pytest.mark.parametrize("edit", [NO_HALF, HALF_AFTER, SECOND_CALLER, FLOAT_NORM, REBOUND],
                         ids=["model-float32", "halved-after", "second-caller-float32", "norm-in-float32",
                              "parameter-rebound"])
def test_twins_are_silent(edit):
    files = load(NAME, (edit,))
    assert files != load(NAME)  # the edit applies
    assert findings(files) == []


# -- variations of the construct, one or two files each --------------------------------------

MODEL = ("import torch\nimport torch.nn as nn\nfrom timm import create_model\n\n\n"
         "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.head = nn.Linear(8, 8)\n\n    def forward(self, x):\n        return self.head(x)\n\n\n")
NORM = "feats / feats.pow(2).sum(dim=-1, keepdim=True).sqrt()"
OTHER = {"other.py": "x = 1\n"}  # two files: the project pass runs


def _lint(body, **more):
    files = dict(OTHER, **{"probe.py": MODEL + body}, **more)
    return sorted((path, d.code) for path, r in lint_project(files, SETTINGS).items()
                  for d in r.diagnostics if d.code == "AMP141")


def test_module_function_positional_in_place_half_of_a_known_class():
    body = (f"def evaluate(model, x):\n    feats = model(x)\n    return {NORM}\n\n\n"
            "def main(x):\n    model = Net()\n    model.half()\n    return evaluate(model, x.half())\n")
    assert _lint(body) == [("probe.py", "AMP141")]


def test_method_of_a_held_instance_and_its_private_helper():
    body = ("class Evaluator:\n    def _normalize(self, feats):\n        return " + NORM + "\n\n"
            "    def run(self, model, x):\n        return self._normalize(model(x))\n\n\n"
            "def main(name, x):\n    model = create_model(name).half()\n    ev = Evaluator()\n"
            "    return ev.run(model, x)\n")
    assert _lint(body) == [("probe.py", "AMP141")]


def test_static_method_through_the_class_by_keyword_and_a_tuple_output():
    body = ("class Metrics:\n    @staticmethod\n    def rms(model, batch):\n"
            "        out, _ = model(batch)\n        return (out * out).mean(dim=-1).sqrt()\n\n\n"
            "def main(name, batch):\n    model = create_model(name)\n    model = model.half()\n"
            "    return Metrics.rms(batch=batch, model=model)\n")
    assert _lint(body) == [("probe.py", "AMP141")]


def test_across_three_files_with_keyword_forwarding():
    engine = ("def evaluate(loader, model, handler):\n    for batch in loader:\n"
              "        handler.eval_batch(model=model, **batch)\n")
    handler = (f"class Handler:\n    def eval_batch(self, model, image):\n        feats = model(image=image)\n"
               f"        return {NORM}\n\n\ndef get_handler():\n    return Handler()\n")
    main = ("from engine import evaluate\nfrom handlers import get_handler\n\n\n"
            "def main(model, loader):\n    model.half()\n    evaluate(loader, model, get_handler())\n")
    files = {"engine.py": engine, "handlers.py": handler, "main.py": main}
    found = sorted((path, d.code) for path, r in lint_project(files, SETTINGS).items()
                   for d in r.diagnostics if d.code == "AMP141")
    assert found == []  # `model` is main's own parameter: what its callers pass is not known
    files["main.py"] = main.replace("def main(model, loader):\n", "def main(build, loader):\n    model = build()\n")
    found = sorted((path, d.code) for path, r in lint_project(files, SETTINGS).items()
                   for d in r.diagnostics if d.code == "AMP141")
    assert found == [("handlers.py", "AMP141")]


EVALUATE = f"def evaluate(model, x):\n    feats = model(x)\n    return {NORM}\n\n\n"


@pytest.mark.parametrize("body", [
    # a second call passes a float32 model
    EVALUATE + "def main(name, x):\n    model = create_model(name)\n    model.half()\n    evaluate(model, x)\n"
    "    evaluate(create_model(name), x)\n",
    # halved after the call
    EVALUATE + "def main(name, x):\n    model = create_model(name)\n    evaluate(model, x)\n    model.half()\n",
    # the function passed on as a value: called where the project does not bind it
    EVALUATE + "def main(name, x):\n    model = create_model(name)\n    model.half()\n    evaluate(model, x)\n"
    "    return [evaluate]\n",
    # a tensor, not a model: the callee never calls it (`h.half()` alone does not convert it)
    f"def evaluate(feats, x):\n    return {NORM}\n\n\n"
    "def main(name, x):\n    h = x.float()\n    h.half()\n    evaluate(h, x)\n",
    # a plain sum of the output: AMP141 reports sums only of values cast to float16 themselves
    "def evaluate(model, x):\n    return model(x).sum()\n\n\n"
    "def main(name, x):\n    model = create_model(name)\n    model.half()\n    print(evaluate(model, x))\n",
    # a second call binds `model` through `*args` / `**kwargs`: the flow records no binding past a star
    EVALUATE + "def main(name, x):\n    model = create_model(name)\n    model.half()\n    evaluate(model, x)\n"
    "    args = (create_model(name), x)\n    evaluate(*args)\n",
    EVALUATE + "def main(name, x):\n    model = create_model(name)\n    model.half()\n    evaluate(model, x)\n"
    "    kwargs = dict(model=create_model(name))\n    evaluate(\n        x=x,\n        **kwargs,\n    )\n",
], ids=["second-caller", "halved-after", "passed-as-value", "not-a-model", "plain-sum", "second-caller-star-args",
        "second-caller-star-kwargs"])
def test_variations_that_stay_silent(body):
    assert _lint(body) == []


torch_only = pytest.mark.torch


@torch_only
def test_the_half_norm_is_zero_and_the_float32_twin_is_unit():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(PROJECTS, NAME, "src"))
    try:
        from open_clip.factory import create_model
        from training.zero_shot import ZeroShotEvaluator

        norms = {}
        for half in (True, False):
            model = create_model("ViT-B-32")
            with torch.no_grad():
                model.visual[1].weight.fill_(12.0 / 192)
                model.visual[1].bias.zero_()
            if half:
                model.half()
            dtype = torch.float16 if half else torch.float32
            evaluator = ZeroShotEvaluator(torch.zeros(512, 10, dtype=dtype))
            features = evaluator._normalize(model.encode_image(torch.ones(2, 3, 8, 8, dtype=dtype)))
            assert features.dtype == dtype
            norms[half] = features.float().norm(dim=-1).tolist()
    finally:
        sys.path.remove(os.path.join(PROJECTS, NAME, "src"))
        for name in [m for m in sys.modules if m.split(".")[0] in ("open_clip", "training")]:
            del sys.modules[name]
    assert norms[True] == [0.0, 0.0]  # the sum of squares overflowed to inf
    assert norms[False] == pytest.approx([1.0, 1.0])


def test_a_star_call_hides_a_binding_unless_it_names_the_parameter():
    # BEiT-3's `handler.eval_batch(model=model, **data)` into `def eval_batch(self, model, **kwargs)`:
    # the star cannot bind `model`, which the call names, and a `def` with `**kwargs` is no call
    evaluate = f"def evaluate(model, x, **kwargs):\n    feats = model(x)\n    return {NORM}\n\n\n"
    main = "def main(name, x, batch):\n    model = create_model(name)\n    model.half()\n"
    assert _lint(evaluate + main + "    evaluate(model=model, x=x, **batch)\n") == [("probe.py", "AMP141")]
    assert _lint(evaluate + main + "    evaluate(x=x, **batch)\n    evaluate(model, x)\n") == []
