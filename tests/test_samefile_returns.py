"""Values a function of the SAME file returns, read by the facts that classify a value's kind as
they read the expression written inline (issue 26; amplint/analysis/facts/function_returns.py).
Each project below keeps the helper next to its use, as forks of the named repositories do; each
test has a twin that must stay silent, and each finding is missed by the code before the summary.

- samefile_device_yolov5 (ultralytics/yolov5's train.py, with `select_device` kept in the
  script): `self.device = select_device(...)` and a local `device = select_device(...)` are
  `torch.device` objects, and `torch.autocast(device_type=self.device)` raises 'ValueError:
  Expected `device_type` of type `str`' (torch 2.13, enabled or not). AMP131.
- samefile_ctxconst_guided (openai/guided-diffusion's train_util.py in a fork that trains under
  autocast): a module constant `AMP_DTYPE = th.bfloat16` names the dtype of the autocast that
  the file's `autocast()` helper returns, and the always-enabled GradScaler of the file scales
  bfloat16 losses. AMP124.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()


def findings(name, code, replace=()):
    return code_findings(load(name, replace), code, SETTINGS)


# -- AMP131: a torch.device returned by a helper of the file -----------------------------------
DEVICE = "samefile_device_yolov5"
DEVICE_FOUND = [("train.py", 31, "AMP131"), ("train.py", 44, "AMP131")]


def test_a_device_a_helper_returns_is_a_device_object():
    found, results = findings(DEVICE, "AMP131")
    assert found == DEVICE_FOUND
    assert all(d.fix is not None for r in results.values() for d in r.diagnostics if d.code == "AMP131")


def test_twin_passing_the_device_type_is_silent():
    found, _ = findings(DEVICE, "AMP131", (("device_type=self.device,", "device_type=self.device.type,"),
                                           ("torch.autocast(device,", "torch.autocast(device.type,")))
    assert found == []


def test_a_helper_with_a_return_that_is_not_a_device_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('        return torch.device("cpu")\n', '        return "cpu"\n'),))
    assert found == []


def test_a_helper_whose_path_falls_off_the_end_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('    raise RuntimeError(f"no device for {device}")\n', ""),))
    assert found == []


def test_a_local_that_shadows_the_helper_is_not_read_as_it():
    found, _ = findings(DEVICE, "AMP131", (("def validate(model, loader, opt):\n",
                                            "def validate(model, loader, opt, select_device=str):\n"),))
    assert found == DEVICE_FOUND[:1]


# -- AMP124: a module constant dtype of the autocast a helper returns -------------------------
CTX = "samefile_ctxconst_guided"
CTX_FOUND = [("guided_diffusion/train_util.py", 21, "AMP124")]
CONST = "AMP_DTYPE = th.bfloat16\n"


def test_a_module_constant_dtype_of_a_returned_autocast_is_read():
    found, results = findings(CTX, "AMP124")
    assert found == CTX_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP124"]
    assert "runs in bfloat16 (line 26)" in diagnostic.message


def test_twin_a_float16_constant_is_silent():
    assert findings(CTX, "AMP124", ((CONST, "AMP_DTYPE = th.float16\n"),))[0] == []


def test_a_constant_bound_twice_is_not_read():
    rebound = CONST + "if th.cuda.is_available() and not th.cuda.is_bf16_supported():\n    AMP_DTYPE = th.float16\n"
    assert findings(CTX, "AMP124", ((CONST, rebound),))[0] == []


def test_a_parameter_of_that_name_shadows_the_constant():
    found, _ = findings(CTX, "AMP124", (("def autocast(enabled=True):", "def autocast(enabled=True, AMP_DTYPE=None):"),))
    assert found == []
