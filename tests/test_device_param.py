"""A `torch.device` reaching an autocast's device type through a parameter bound in another file
(amplint/analysis/project/device_params.py; AMP131 reads it through facts/device_values.py).

tests/projects/device_param_detr imitates facebookresearch/detr's layout: main.py builds
`device = torch.device(args.device)` and passes it positionally to `train_one_epoch` of
engine.py (and by keyword to `evaluate`), with an `--amp` flag as later DETR forks add it;
models/ (build_model, DETR, SetCriterion) and util/misc.py complete the tree. engine.py opens
`torch.autocast(device_type=device, enabled=amp)`: 'ValueError: Expected `device_type` of type
`str`' on every run, AMP on or off. The corrected twin passes `device.type`.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()
NAME = "device_param_detr"
FINDING = ("engine.py", 17, "AMP131")
TRAIN_WITH = "        with torch.autocast(device_type=device, enabled=amp):\n"
DEVICE = "    device = torch.device(args.device)\n"


def amp131(files):
    return code_findings(files, "AMP131", SETTINGS)


def test_a_device_object_passed_to_the_loop_of_another_file_is_reported():
    found, results = amp131(load(NAME))
    assert found == [FINDING]
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP131"]
    assert "the parameter `device` gets `device = torch.device(...)` at main.py:25 from a call" in diagnostic.message
    assert diagnostic.fix is not None  # `torch.device(device).type`: the same string for a str or a device


def test_twin_passing_the_device_type_is_silent():
    files = load(NAME, ((TRAIN_WITH, "        with torch.autocast(device_type=device.type, enabled=amp):\n"),))
    assert amp131(files)[0] == []


def test_a_keyword_binding_is_read_too():
    files = load(NAME, (("        with torch.autocast(device.type):\n", "        with torch.autocast(device):\n"),))
    assert amp131(files)[0] == [FINDING, ("engine.py", 40, "AMP131")]


def test_a_string_passed_is_silent():
    """`args.device` is the string "cuda": a valid device type."""
    files = load(NAME, ((DEVICE, "    device = args.device\n"),))
    assert amp131(files)[0] == []


def test_a_name_the_caller_binds_two_ways_is_not_guessed():
    files = load(NAME, ((DEVICE, DEVICE + "    if args.amp:\n        device = args.device\n"),))
    assert amp131(files)[0] == []


def test_a_parameter_the_loop_rebinds_is_not_followed():
    files = load(NAME, (("    model.train()\n", "    model.train()\n    device = str(device).split(':')[0]\n"),))
    assert amp131(files)[0] == []


def test_an_annotated_string_parameter_of_the_loop_is_not_followed():
    """`device: str` is the function's own word on the type: the annotation is not overridden."""
    files = load(NAME, (("optimizer, device, epoch", "optimizer, device: str, epoch"),))
    assert amp131(files)[0] == []


def test_warm_run_follows_an_edit_of_the_script_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "main.py", ((DEVICE, "    device = args.device\n"),),
                                    "AMP131", [FINDING])


def test_a_device_type_local_of_the_file_is_not_parsed_for(monkeypatch):
    """transformers' `device_type = x.device.type ...; with torch.autocast(device_type=device_type)`:
    the name is assigned in the file, so the file is not parsed to look for a parameter (16 such
    files cost 0.33 s CPU of transformers' run before this text test)."""
    import ast

    from amplint.analysis.project import device_params

    parses = []
    monkeypatch.setattr(device_params.ast, "parse", lambda *a, **k: parses.append(1) or ast.Module([], []))
    local = ("def forward(self, x):\n    device_type = x.device.type if x.device.type != 'mps' else 'cpu'\n"
             "    with torch.autocast(device_type=device_type, enabled=False):\n        return x\n")
    assert device_params.param_devices(local) == [] and parses == []
    monkeypatch.undo()
    param = "def run(model, device):\n    with torch.autocast(device_type=device):\n        return model()\n"
    assert device_params.param_devices(param) == [("run", "device", 2)]
