"""What a function of ANOTHER file returns, read by the facts that classify a value's kind as they
read a same-file helper (issue 26): the project pass summarises the callee's file with `ast`
(amplint/analysis/project/return_values.py `return_kind`) and hands the importing file one
EntryReturn with a `kind` per imported name (project/return_kinds.py), which
`FunctionReturns.remote` reads where `of_call` finds no callee of the file. Each project keeps the
helper in a utils module, as the named repositories do; each has a twin that must stay silent,
and each finding is missed by the code before the summary.

- crossfile_device_yolov5 (ultralytics/yolov5: `select_device` in utils/torch_utils.py, called
  from train.py): `self.device = select_device(...)` and a local `device = select_device(...)`
  are `torch.device` objects; `torch.autocast(device_type=self.device)` raises 'ValueError:
  Expected `device_type` of type `str`, got: `<class 'torch.device'>`' (torch 2.13, CPU, enabled
  or not). The helper returning a device type string (`device_name`) is not one. AMP131.
- crossfile_finfo_imagen (lucidrains/imagen-pytorch, with its helpers `exists` / `default` /
  `max_neg_value` in imagen_pytorch/utils.py): the text tokens' cross-attention fills its half
  scores with `max_neg_value(x)`, `x` the float32 LayerNorm output of the text embeddings. Under
  CPU autocast (torch 2.13) the forward raises 'value cannot be converted to type c10::Half
  without overflow' (c10::BFloat16 under bfloat16); the twin `max_neg_value(sim)` runs. AMP111.
- crossfile_halfbuilder_fastspeech2 (ming024/FastSpeech2: `get_model` in utils/model.py, called
  from train.py, in a fork that casts the model under `fp16=`): train.py steps a plain Adam over
  the half model it gets (torch 2.13: the parameters are float16, its eps=1e-9 is 0.0 in
  float16, 1 + 1e-4 rounds to 1), with no autocast or GradScaler. AMP152, reported at the call
  (the cast's file has no optimizer); a call passing `fp16=False`, or leaving the False default,
  is silent.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build
from amplint.analysis.project import return_values

from project_files import assert_warm_run_follows_an_edit, code_findings, load

SETTINGS = Settings.default()


def findings(name, code, replace=()):
    return code_findings(load(name, replace), code, SETTINGS)


# -- AMP131: a torch.device returned by a helper of another file ------------------------------
DEVICE = "crossfile_device_yolov5"
DEVICE_FOUND = [("train.py", 20, "AMP131"), ("train.py", 33, "AMP131")]


def test_a_device_another_files_helper_returns_is_a_device_object():
    found, results = findings(DEVICE, "AMP131")
    assert found == DEVICE_FOUND
    assert all(d.fix is not None for r in results.values() for d in r.diagnostics if d.code == "AMP131")


def test_twin_passing_the_device_type_is_silent():
    found, _ = findings(DEVICE, "AMP131", (("device_type=self.device,", "device_type=self.device.type,"),
                                           ("torch.autocast(device,", "torch.autocast(device.type,")))
    assert found == []


def test_a_helper_with_a_return_that_is_not_a_device_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('        return torch.device("mps")\n', '        return "mps"\n'),))
    assert found == []


def test_a_helper_whose_path_falls_off_the_end_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('    return torch.device("cpu")\n', ""),))
    assert found == []


def test_a_decorated_helper_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (("def select_device(", "@functools.lru_cache\ndef select_device("),
                                           ("import os\n", "import functools\nimport os\n")))
    assert found == []


def test_a_local_that_shadows_the_imported_helper_is_not_read_as_it():
    found, _ = findings(DEVICE, "AMP131", (("def validate(model, loader, opt):\n",
                                            "def validate(model, loader, opt, select_device=str):\n"),))
    assert found == DEVICE_FOUND[:1]


def test_an_edit_of_the_helpers_file_alone_updates_the_callers_finding(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, DEVICE, "utils/torch_utils.py", [('return torch.device("cuda:0")', 'return "cuda"')],
        "AMP131", DEVICE_FOUND)


def test_only_the_files_that_can_return_a_device_are_summarised(monkeypatch):
    from amplint.analysis.project.return_kinds import return_kind_entries

    read = []
    real = return_values._module_kinds
    monkeypatch.setattr(return_values, "_module_kinds", lambda text: read.append(text) or real(text))
    monkeypatch.setattr(return_values, "_KIND_MEMO", {})
    files = load(DEVICE)
    project = build(files)
    made = set(project.summaries)
    entries = return_kind_entries(project, sorted(files))
    # the callers' imports are read from their text: only the callee is summarised, resolving it
    assert set(project.summaries) - made <= {"crossfile_device_yolov5/utils/torch_utils.py"}
    assert [(e.call, e.kind) for e in entries["crossfile_device_yolov5/train.py"]] == [("select_device", "device")]
    assert len(entries) == 1
    # train.py imports five names of the project; only utils/torch_utils.py holds `device(`
    assert read == [files["crossfile_device_yolov5/utils/torch_utils.py"]]


# -- AMP111: a helper of another file returns finfo of its parameter's dtype ------------------
FINFO = "crossfile_finfo_imagen"
FINFO_FOUND = [("imagen_pytorch/imagen_pytorch.py", 23, "AMP111")]
FILL = "sim.masked_fill(~mask, max_neg_value(x))"


def test_a_finfo_helper_of_another_file_reads_the_dtype_of_its_argument():
    found, results = findings(FINFO, "AMP111")
    assert found == FINFO_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP111"]
    assert diagnostic.message.startswith(
        "`max_neg_value(x)` (`torch.finfo(t.dtype).max` of `max_neg_value` at imagen_pytorch/utils.py:14, "
        "with `t` = `x`) takes the range of `x`")
    assert diagnostic.fix is None  # the argument, not the helper, is what to change


def test_twin_the_helper_given_the_filled_tensor_is_silent():
    assert findings(FINFO, "AMP111", ((FILL, "sim.masked_fill(~mask, max_neg_value(sim))"),))[0] == []


def test_the_argument_passed_by_keyword_is_read():
    assert findings(FINFO, "AMP111", ((FILL, "sim.masked_fill(~mask, max_neg_value(t=x))"),))[0] == FINFO_FOUND


def test_a_helper_whose_returns_read_different_parameters_is_not_read():
    two = ("def max_neg_value(t):\n    return -torch.finfo(t.dtype).max\n",
           "def max_neg_value(t, like=None):\n    if like is not None:\n        return -torch.finfo(like.dtype).max\n"
           "    return -torch.finfo(t.dtype).max\n")
    assert findings(FINFO, "AMP111", (two,))[0] == []


def test_a_helper_that_rebinds_its_parameter_is_not_read():
    rebound = ("    return -torch.finfo(t.dtype).max\n", "    t = t.float()\n    return -torch.finfo(t.dtype).max\n")
    assert findings(FINFO, "AMP111", (rebound,))[0] == []


def test_a_module_name_bound_again_is_not_the_helper():
    again = ("from imagen_pytorch.utils import default, exists, max_neg_value\n",
             "from imagen_pytorch.utils import default, exists, max_neg_value\n\nmax_neg_value = -1e4\n")
    assert findings(FINFO, "AMP111", (again,))[0] == []


# -- AMP152: a builder of another file returns the model it casts to half ----------------------
HALF = "crossfile_halfbuilder_fastspeech2"
HALF_FOUND = [("train.py", 14, "AMP152")]


def test_a_model_another_files_builder_casts_is_trained_in_pure_fp16():
    found, results = findings(HALF, "AMP152")
    assert found == HALF_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP152"]
    assert diagnostic.message.startswith(
        "`model` is cast to float16 (at utils/model.py:13, through this call: `get_model` returns it) and "
        "trained by a plain `Adam` (line 15)")


def test_a_helper_that_only_raises_is_no_builder_and_stops_nothing():
    """FastSpeech2's utils/model.py with a stub next to `get_model` whose docstring writes
    `.half()` and whose body only raises: it returns nothing, and reading it must not stop the
    project pass (an IndexError there dropped the finding). Its twin, `return model.half()`,
    is a builder of the half kind."""
    stub = ("def get_param_num(model):",
            'def get_vocoder(config, device):\n    """Returns the HiFi-GAN vocoder, `.half()` under fp16."""\n'
            "    raise NotImplementedError\n\n\ndef get_param_num(model):")
    assert findings(HALF, "AMP152", (stub,))[0] == HALF_FOUND
    text = 'def load(model):\n    """`.half()` for inference."""\n    raise NotImplementedError\n'
    assert return_values.return_kind("stub.py", text, "load") is None
    built = text.replace("raise NotImplementedError", "return model.half()")
    assert return_values.return_kind("built.py", built, "load")[0] == "half"


def test_a_call_that_turns_the_cast_off_is_silent():
    assert findings(HALF, "AMP152", (("fp16=args.fp16)", "fp16=False)"),))[0] == []
    assert findings(HALF, "AMP152", ((", fp16=args.fp16)", ")"),))[0] == []


def test_twin_training_under_autocast_with_a_scaler_is_silent():
    twin = (("        output = model(texts.to(device))\n        loss = loss_fn(mels.to(device), output)\n"
             "        loss.backward()\n",
             "        with torch.autocast(\"cuda\"):\n            output = model(texts.to(device))\n"
             "            loss = loss_fn(mels.to(device), output)\n        scaler.scale(loss).backward()\n"),
            ("    optimizer = torch.optim.Adam(", "    scaler = torch.amp.GradScaler()\n    optimizer = torch.optim.Adam("))
    assert findings(HALF, "AMP152", twin)[0] == []


def test_a_builder_returning_another_local_than_the_cast_one_is_not_read():
    assert findings(HALF, "AMP152", (("        model = model.half()\n", "        half = model.half()\n"),))[0] == []


def test_twin_the_builder_casts_back_before_returning_is_silent():
    """The cross-file summary agrees with the same-file one (r16b-review's fix of
    returned_casts): a cast undone after it (`model = model.float()`, `model.to(torch.float32)`)
    or a name bound again is not the returned half model; a move (`model = model.cuda()`,
    `model.to(device)`) still is."""
    cast = "        model = model.half()\n"
    for after in ("    model = model.float()\n", "    model.to(torch.float32)\n",
                  "    model = FastSpeech2(preprocess_config, model_config)\n"):
        assert findings(HALF, "AMP152", ((cast, cast + after),))[0] == [], after
    for after in ("    model = model.cuda()\n", "    model.to(device)\n"):
        assert findings(HALF, "AMP152", ((cast, cast + after),))[0] == HALF_FOUND, after
