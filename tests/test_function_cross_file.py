"""AMP151 across files (amplint/analysis/project/function_entries.py): a custom autograd Function
defined in one module of the project, `.apply`'d (or called through a module-level
`fn = Cls.apply` it exports) under an autocast region in another. Each corrected twin adds
`custom_fwd`/`custom_bwd` in the *defining* file only and stays silent.

- tests/projects/fn_deformable_detr: fundamentalvision/Deformable-DETR layout (models/ops/
  functions/ms_deform_attn_func.py defines `MSDeformAttnFunction`, models/ops/modules/
  ms_deform_attn.py applies it in `MSDeformAttn.forward`, engine.py's `train_one_epoch` opens
  `torch.cuda.amp.autocast()` around the model). The project spells the extension
  `from .. import _C as MSDA` (the torchvision/detectron2 spelling); the tests at the end use the
  real repository's `import MultiScaleDeformableAttention as MSDA`.
- tests/projects/fn_mmcv_alias: open-mmlab/mmcv 1.x ops layout (`ext_loader.load_ext`,
  `deform_conv2d = DeformConv2dFunction.apply` in mmcv/ops/deform_conv.py, re-exported by
  mmcv/ops/__init__.py), called under `torch.autocast` in tools/benchmark_dcn.py (the shape of
  mmcv's `_test_amp_deformconv`). The real mmcv forward casts with `type_as`, which the rule
  takes for dtypes matched by hand; this one does not.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load
from project_files import cli_findings as shared_cli_findings

SETTINGS = Settings.default()

DETR = "fn_deformable_detr"
DETR_FUNCTIONS = "models/ops/functions/ms_deform_attn_func.py"
DETR_FINDING = (f"{DETR}/models/ops/modules/ms_deform_attn.py", 34, "AMP151")
DETR_DECORATED = (
    ("from torch.autograd.function import once_differentiable\n",
     "from torch.autograd.function import once_differentiable\n"
     "from torch.cuda.amp import custom_bwd, custom_fwd\n"),
    ("    @staticmethod\n    def forward(", "    @staticmethod\n    @custom_fwd(cast_inputs=torch.float32)\n    def forward("),
    ("    @once_differentiable\n", "    @once_differentiable\n    @custom_bwd\n"),
)
MMCV = "fn_mmcv_alias"
MMCV_FINDING = (f"{MMCV}/tools/benchmark_dcn.py", 17, "AMP151")
MMCV_DECORATED = (
    ("from torch.autograd.function import once_differentiable\n",
     "from torch.autograd.function import once_differentiable\n"
     "from torch.amp import custom_bwd, custom_fwd\n"),
    ("    @staticmethod\n    def forward(",
     "    @staticmethod\n    @custom_fwd(device_type='cuda', cast_inputs=torch.float32)\n    def forward("),
    ("    @once_differentiable\n", "    @once_differentiable\n    @custom_bwd(device_type='cuda')\n"),
)


def findings(results, code="AMP151"):
    return sorted((path, d.line, d.code) for path, result in results.items()
                  for d in result.diagnostics if d.code == code)


def messages(results):
    return [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP151"]


def test_deformable_detr_function_of_another_module_applied_under_the_trainers_region():
    results = lint_project(load(DETR), SETTINGS)
    assert findings(results) == [DETR_FINDING]
    (message,) = messages(results)
    assert f"defined at {DETR_FUNCTIONS}:13" in message
    assert "engine.py:11" in message  # the region, in a third file


def test_deformable_detr_twin_decorated_in_the_functions_module_is_silent():
    files = load(DETR, DETR_DECORATED)
    assert "@custom_fwd(cast_inputs=torch.float32)" in files[f"{DETR}/{DETR_FUNCTIONS}"]
    assert findings(lint_project(files, SETTINGS)) == []


def test_deformable_detr_without_the_region_is_silent():
    files = load(DETR, (("        with torch.cuda.amp.autocast():\n", "        if True:\n"),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_mmcv_exported_apply_alias_called_under_autocast_in_another_file():
    results = lint_project(load(MMCV), SETTINGS)
    # bench() calls it under autocast; bench_fp32() outside any region: one finding
    assert findings(results) == [MMCV_FINDING]
    (message,) = messages(results)
    assert "`deform_conv2d` under autocast" in message
    assert "DeformConv2dFunction, defined at mmcv/ops/deform_conv.py:17" in message


def test_mmcv_twin_decorated_in_the_ops_module_is_silent():
    assert findings(lint_project(load(MMCV, MMCV_DECORATED), SETTINGS)) == []


def test_a_function_that_only_works_elementwise_is_not_reported_across_files():
    """fairseq's GradMultiply (fairseq/modules/grad_multiply.py), applied under autocast in a
    model file: elementwise, no extension, nothing to report."""
    files = {
        "fairseq/modules/grad_multiply.py": (
            "import torch\n\n\nclass GradMultiply(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, x, scale):\n"
            "        ctx.scale = scale\n        res = x.new(x)\n        return res\n\n"
            "    @staticmethod\n    def backward(ctx, grad):\n"
            "        return grad * ctx.scale, None\n"),
        "fairseq/models/wav2vec.py": (
            "import torch\nfrom fairseq.modules.grad_multiply import GradMultiply\n\n\n"
            "def features(x, mult):\n    with torch.autocast('cuda'):\n"
            "        return GradMultiply.apply(x, mult)\n"),
    }
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_local_name_shadowing_the_import_is_not_the_function():
    files = load(MMCV, (("            out = deform_conv2d(x, offset, weight)\n",
                         "            deform_conv2d = torch.nn.functional.conv2d\n"
                         "            out = deform_conv2d(x, weight)\n"),))
    assert findings(lint_project(files, SETTINGS)) == []


# -- through the CLI and its cache -----------------------------------------------------------
def cli_findings(root: Path, *args):
    return shared_cli_findings(root, *args, codes=("AMP151",))


@pytest.mark.parametrize("name, defining, edits, finding", [
    (DETR, DETR_FUNCTIONS, DETR_DECORATED, DETR_FINDING),
    (MMCV, "mmcv/ops/deform_conv.py", MMCV_DECORATED, MMCV_FINDING),
])
def test_warm_run_after_editing_only_the_defining_file(tmp_path, name, defining, edits, finding):
    root = tmp_path / name
    shutil.copytree(os.path.join(PROJECTS, name), root)
    cache = str(tmp_path / "cache")
    expected = [(finding[0][len(name) + 1:],) + finding[1:]]
    assert cli_findings(root, "--cache-dir", cache) == expected
    assert cli_findings(root, "--cache-dir", cache) == expected  # warm, unchanged
    path = root / defining
    text = path.read_text()
    edited = text
    for old, new in edits:
        edited = edited.replace(old, new)
    path.write_text(edited)
    assert cli_findings(root, "--cache-dir", cache) == []  # the applying file did not change
    path.write_text(text)
    assert cli_findings(root, "--cache-dir", cache) == expected
    assert cli_findings(root, "--no-cache", "--jobs", "1") == expected


# -- the real repository's spelling: a kernel module of any name ------------------------------
REAL_SPELLING = (("from .. import _C as MSDA\n", "import MultiScaleDeformableAttention as MSDA\n"),)


def test_deformable_detr_with_its_real_extension_import_is_reported():
    """Deformable-DETR imports its compiled op as `import MultiScaleDeformableAttention as MSDA`
    (built by models/ops/setup.py): a name no extension pattern knows. The Function's forward
    calls `MSDA.ms_deform_attn_forward` and its backward `MSDA.ms_deform_attn_backward`: a
    kernel binding pair, whatever the module's name."""
    files = load(DETR, REAL_SPELLING)
    assert "import MultiScaleDeformableAttention as MSDA\n" in files[f"{DETR}/{DETR_FUNCTIONS}"]
    results = lint_project(files, SETTINGS)
    assert findings(results) == [DETR_FINDING]
    (message,) = messages(results)
    assert "calls the compiled extension `MSDA`" in message


def test_deformable_detr_real_spelling_decorated_twin_is_silent():
    assert findings(lint_project(load(DETR, REAL_SPELLING + DETR_DECORATED), SETTINGS)) == []


def test_a_python_helper_module_called_in_forward_only_is_not_an_extension():
    """A plain module whose helper only forward calls (backward is elementwise): no binding
    pair, no op autocast casts, nothing to report."""
    files = load(DETR, REAL_SPELLING + (
        ("            MSDA.ms_deform_attn_backward(", "            _unused_backward("),))
    assert findings(lint_project(files, SETTINGS)) == []


def test_the_class_imported_from_its_defining_module_itself_is_reported():
    """`from ..functions.ms_deform_attn_func import MSDeformAttnFunction` (no package re-export):
    the defining module never writes `.apply`; the importer does."""
    files = load(DETR, REAL_SPELLING + (
        ("from ..functions import MSDeformAttnFunction\n",
         "from ..functions.ms_deform_attn_func import MSDeformAttnFunction\n"),))
    assert ".apply" not in files[f"{DETR}/{DETR_FUNCTIONS}"]
    assert findings(lint_project(files, SETTINGS)) == [DETR_FINDING]


def test_a_project_module_of_the_binding_pairs_name_is_python_not_an_extension():
    """The same pair of calls into a module the project itself holds as Python source
    (`MultiScaleDeformableAttention.py` beside the Function, a pure-torch fallback) is no
    compiled kernel: nothing to report (a reviewer's probe, found on this round's merge)."""
    files = load(DETR, REAL_SPELLING)
    folder = DETR_FUNCTIONS.rsplit("/", 1)[0]
    files[f"{DETR}/{folder}/MultiScaleDeformableAttention.py"] = (
        "import torch\n\n\ndef ms_deform_attn_forward(value, *args):\n    return value * 2\n\n\n"
        "def ms_deform_attn_backward(value, *args):\n    return value * 2\n")
    assert findings(lint_project(files, SETTINGS)) == []


def test_a_python_module_beside_a_single_file_function_is_not_an_extension(tmp_path):
    """One file, linted alone through the CLI: `import swish_impl as S` finds swish_impl.py
    beside it, so S is Python source, not a kernel (the rule looks next to the file)."""
    from click.testing import CliRunner

    from amplint.cli.main import cli

    (tmp_path / "swish_impl.py").write_text(
        "import torch\n\n\ndef swish_forward(x):\n    return x * torch.sigmoid(x)\n\n\n"
        "def swish_backward(x, g):\n    s = torch.sigmoid(x)\n    return g * (s * (1 + x * (1 - s)))\n")
    (tmp_path / "swish.py").write_text(
        "import torch\nimport swish_impl as S\n\n\nclass SwishFn(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        "        return S.swish_forward(x)\n\n    @staticmethod\n    def backward(ctx, g):\n"
        "        (x,) = ctx.saved_tensors\n        return S.swish_backward(x, g)\n\n\n"
        "def run(x):\n    with torch.autocast('cuda'):\n        return SwishFn.apply(x)\n")
    args = [str(tmp_path / "swish.py"), "--no-cache", "--isolated-files", "--select", "AMP151"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    (tmp_path / "swish_impl.py").unlink()  # now only an extension can be `swish_impl`
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "calls the compiled extension `S`" in result.output
