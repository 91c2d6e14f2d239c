"""AMP103 across files when the region's model is a parameter (issue 26): a factory returns the
model it halves, the caller passes it on, and the function that opens the autocast region
receives it as a parameter (amplint/analysis/project/param_arguments.py, followed from
half_returns.py). The cast sits under a configured flag, taken only where the project's
configs turn it on (amplint/analysis/project/config_flags.py).

tests/projects/half_param_deit: facebookresearch/deit layout (main.py with its argparse parser,
engine.py `train_one_epoch` with the loss scaler, models.py `deit_tiny_patch16_224`) in a fork
whose `utils.build_model(args)` keeps the weights in fp16 under `--half-weights` (default on);
main.py passes the model to `train_one_epoch`, which hands it to `forward_loss`, which runs it
under `torch.autocast("cuda", dtype=torch.float16)`.
Twins: the option off by default, a flag no config sets, the model cast back to float, the
teacher (never halved) trained instead, the region run without gradients (inference).
"""

from __future__ import annotations

import importlib
import sys

import pytest

from amplint.analysis.diagnostics import Severity

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "half_param_deit"
CAST = ("utils.py", 9, "AMP103")
OPTION = '"--half-weights", type=bool, default=True,'
GUARD = "    if args.half_weights:\n"


def amp103(files):
    return code_findings(files, "AMP103")[0]


def test_model_halved_by_a_factory_reaches_the_region_as_a_parameter_two_calls_down():
    found, results = code_findings(load(NAME), "AMP103")
    assert found == [CAST]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "`build_model` returns it to `build_model(args) at main.py:26`" in diag.message
    assert "region at engine.py:5 (`forward_loss` receives it as its parameter `model`)" in diag.message
    assert diag.severity is Severity.ERROR  # main.py, which passes the model, makes the GradScaler


def test_passed_by_keyword_is_followed_too():
    files = load(NAME, (("        train_one_epoch(model, criterion,", "        train_one_epoch(model=model, criterion=criterion,"),
                        ("data_loader_train, optimizer, device, loss_scaler,",
                         "data_loader=data_loader_train, optimizer=optimizer, device=device, loss_scaler=loss_scaler,")))
    assert amp103(files) == [CAST]


def test_twin_the_option_off_by_default_is_silent():
    assert amp103(load(NAME, ((OPTION, '"--half-weights", type=bool, default=False,'),))) == []
    assert amp103(load(NAME, ((OPTION, '"--half-weights", action="store_true",'),))) == []
    assert amp103(load(NAME, ((OPTION, '"--half-weights", action="store_false",'),))) == [CAST]


def test_twin_a_flag_no_config_sets_is_silent():
    assert amp103(load(NAME, ((GUARD, "    if args.low_memory:\n"),))) == []


def test_a_yaml_config_turns_a_nested_flag_on():
    files = load(NAME, ((GUARD, "    if args.model.half_weights:\n"),))
    files[f"{NAME}/configs/deit_tiny.yaml"] = "model:\n  name: deit_tiny\n  half_weights: true\n"
    assert amp103(files) == [CAST]
    files[f"{NAME}/configs/deit_tiny.yaml"] = "model:\n  name: deit_tiny\n  half_weights: false\n"
    assert amp103(files) == []
    files[f"{NAME}/configs/deit_tiny.yaml"] = "optim:\n  half_weights: true\n"  # another key path
    assert amp103(files) == []


def test_a_python_config_turns_a_nested_flag_on_but_not_a_commented_out_line():
    """yacs style (detectron2's config/defaults.py): `_C.MODEL.X = True` turns the flag on; the
    same assignment commented out above the live `False` sets nothing."""
    files = load(NAME, ((GUARD, "    if args.model.half_weights:\n"),))
    head = "from yacs.config import CfgNode as CN\n\n_C = CN()\n_C.model = CN()\n"
    files[f"{NAME}/config/defaults.py"] = head + "_C.model.half_weights = True\n"
    assert amp103(files) == [CAST]
    files[f"{NAME}/config/defaults.py"] = head + "# _C.model.half_weights = True\n_C.model.half_weights = False\n"
    assert amp103(files) == []


def test_twin_a_commented_out_option_default_is_silent():
    files = load(NAME, ((OPTION, '"--half-weights", type=bool, default=False,'),))
    main = files[f"{NAME}/main.py"]
    line = next(l for l in main.splitlines(keepends=True) if "--half-weights" in l)
    indent = line[: len(line) - len(line.lstrip())]
    files[f"{NAME}/main.py"] = main.replace(line, indent + "# " + line.lstrip().replace("False", "True") + line)
    assert "# parser.add_argument(\"--half-weights\", type=bool, default=True" in files[f"{NAME}/main.py"]
    assert amp103(files) == []


def test_an_option_whose_help_has_parentheses_or_a_dest_reads_as_written():
    """argparse options as real parsers write them (a `help=` with parentheses before
    `default=`, the option spelled by `dest=`) read with `ast`: the text pattern stopped at the
    first `)`."""
    line = 'parser.add_argument("--half-weights", type=bool, default=True, help="keep the weights in fp16 to save memory")'
    helped = ('parser.add_argument("--half-weights", help="keep the weights in fp16 (see utils.build_model())",\n'
              '                        type=bool, default=True)  # (on)')
    assert amp103(load(NAME, ((line, helped),))) == [CAST]
    assert amp103(load(NAME, ((line, helped.replace("True", "False")),))) == []
    by_dest = 'parser.add_argument("--fp16-weights", dest="half_weights", type=bool, default=True)'
    assert amp103(load(NAME, ((line, by_dest),))) == [CAST]
    other = 'parser.add_argument("--half-weights", dest="fp16_weights", type=bool, default=True)'
    assert amp103(load(NAME, ((line, other),))) == []


def test_twin_the_region_runs_without_gradients_is_silent():
    """Inference (sd-scripts' anima_minimal_inference.py: a bfloat16 DiT run under `no_grad` and
    autocast) trains nothing: no master copy is missing."""
    region = '    with torch.autocast("cuda", dtype=torch.float16):\n'
    assert amp103(load(NAME, ((region, "    with torch.no_grad(), torch.autocast(\"cuda\", dtype=torch.float16):\n"),))) == []
    decorated = load(NAME, (("def forward_loss(", "@torch.inference_mode()\ndef forward_loss("),))
    assert amp103(decorated) == []


def test_twin_cast_back_to_float_is_silent():
    assert amp103(load(NAME, (("model = model.half()", "model = model.float()"),))) == []


def test_twin_the_unhalved_teacher_passed_instead_is_silent():
    files = load(NAME, (("        train_one_epoch(model, criterion,", "        train_one_epoch(teacher, criterion,"),))
    assert amp103(files) == []


def test_warm_run_after_turning_the_option_off_in_main_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "main.py", ((OPTION, '"--half-weights", type=bool, default=False,'),),
                                    "AMP103", [CAST])


@pytest.mark.parametrize("half", [True, False])
def test_execution_the_halved_model_cannot_be_unscaled(tmp_path, monkeypatch, half):
    """The project's own code on torch's CPU autocast (float16, as the CUDA region): the
    factory's model is fp16, its gradients are fp16 and the loss scaler's `unscale_` (clipping
    is on) raises; the float twin trains."""
    torch = pytest.importorskip("torch")
    for path, text in load(NAME).items():
        target = tmp_path / path.split("/", 1)[1]
        target.write_text(text.replace('"cuda"', '"cpu"'))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("models", "utils", "engine"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    utils, engine = importlib.import_module("utils"), importlib.import_module("engine")
    try:
        args = type("Args", (), {"nb_classes": 10, "half_weights": half})()
        model = utils.build_model(args)
        assert {p.dtype for p in model.parameters()} == {torch.float16 if half else torch.float32}
        optimizer = torch.optim.AdamW(model.parameters())
        batch = [(torch.randn(2, 3, 32, 32), torch.tensor([1, 2]))]
        run = lambda: engine.train_one_epoch(model, torch.nn.CrossEntropyLoss(), batch, optimizer, "cpu",  # noqa: E731
                                             torch.amp.GradScaler("cpu"), max_norm=1.0)
        if half:
            with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
                run()
        else:
            run()
    finally:
        for name in ("models", "utils", "engine"):
            sys.modules.pop(name, None)
