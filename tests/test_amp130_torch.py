"""AMP130 with real torch: the rewritten autocast/GradScaler objects have the same settings as
the deprecated originals, and the rewritten source imports with `-W error::FutureWarning`.

Without CUDA, `torch.cuda.amp.GradScaler` and `torch.amp.GradScaler("cuda")` both warn and
disable themselves (and then never set `_init_scale` and friends), and CUDA autocast disables
itself the same way: comparing those would prove little. The CUDA cases therefore run twice:
as this machine really is, and with CUDA availability simulated
(`torch.cuda.amp.common.amp_definitely_not_available` patched to return False, which is all
either constructor consults), so that every setting is really stored and compared. The CPU
cases (`torch.cpu.amp.*`) are enabled on any machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch")

from amplint.analysis.engine import Settings, lint_source  # noqa: E402

SETTINGS = Settings(frozenset({"AMP130"}))
AUTOCAST_ATTRS = ("fast_dtype", "_enabled", "device", "_cache_enabled")
SCALER_ATTRS = (
    "_init_scale", "_growth_factor", "_backoff_factor", "_growth_interval", "_enabled", "_device",
)
MISSING = object()

# (id, source building `obj`, attributes, settings the original is known to have when enabled)
CASES = [
    (
        "autocast-positional-enabled",
        "from torch.cuda.amp import autocast\nuse_amp = False\nobj = autocast(use_amp)\n",
        AUTOCAST_ATTRS, {"_enabled": False, "fast_dtype": torch.float16, "device": "cuda"},
    ),
    (
        "autocast-positional-enabled-dtype-cache",
        "import torch\nobj = torch.cuda.amp.autocast(True, torch.float16, False)\n",
        AUTOCAST_ATTRS, {"_enabled": True, "fast_dtype": torch.float16, "_cache_enabled": False},
    ),
    (
        "autocast-alias-keywords",
        "import torch\nfrom torch.cuda import amp as tamp\n"
        "obj = tamp.autocast(dtype=torch.bfloat16, cache_enabled=False)\n",
        AUTOCAST_ATTRS, {"fast_dtype": torch.bfloat16, "_cache_enabled": False},
    ),
    (
        "cpu-autocast-positional-dtype",
        "import torch\nobj = torch.cpu.amp.autocast(True, torch.float16)\n",
        AUTOCAST_ATTRS, {"_enabled": True, "fast_dtype": torch.float16, "device": "cpu"},
    ),
    (
        "cpu-autocast-nested-in-float16-region",  # torch.amp.autocast would inherit float16
        "import torch\n"
        "with torch.autocast('cpu', dtype=torch.float16, cache_enabled=False):\n"
        "    obj = torch.cpu.amp.autocast()\n",
        AUTOCAST_ATTRS, {"fast_dtype": torch.bfloat16, "_cache_enabled": True},
    ),
    (
        "scaler-positional-init-scale",
        "from torch.cuda.amp import GradScaler\nobj = GradScaler(1024.0, growth_interval=10)\n",
        SCALER_ATTRS, {"_init_scale": 1024.0, "_growth_interval": 10, "_device": "cuda"},
    ),
    (
        "scaler-all-positional",
        "import torch\nobj = torch.cuda.amp.GradScaler(2.0**10, 3.0, 0.25, 7, True)\n",
        SCALER_ATTRS,
        {"_init_scale": 1024.0, "_growth_factor": 3.0, "_backoff_factor": 0.25,
         "_growth_interval": 7},
    ),
    (
        "scaler-disabled",
        "import torch\nobj = torch.cuda.amp.GradScaler(enabled=False)\n",
        SCALER_ATTRS, {"_enabled": False},
    ),
    (
        "cpu-scaler-positional",
        "import torch\nobj = torch.cpu.amp.GradScaler(2.0**10, 3.0, 0.25, 7)\n",
        SCALER_ATTRS,
        {"_init_scale": 1024.0, "_growth_factor": 3.0, "_backoff_factor": 0.25,
         "_growth_interval": 7, "_enabled": True, "_device": "cpu"},
    ),
]


def _rewrite(source: str) -> str:
    result = lint_source("example.py", source, SETTINGS, fix=True)
    assert not result.errors
    assert result.fixed_source is not None, "AMP130 did not rewrite the source"
    return result.fixed_source


def _build(source: str, forbid_future: bool):
    namespace: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if forbid_future:
            warnings.simplefilter("error", FutureWarning)
        exec(compile(source, "example.py", "exec"), namespace)
    return namespace["obj"], caught


@pytest.fixture(params=["as-is", "cuda-simulated"])
def cuda_mode(request, monkeypatch):
    if request.param == "cuda-simulated":
        monkeypatch.setattr(torch.cuda.amp.common, "amp_definitely_not_available", lambda: False)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    return request.param


@pytest.mark.parametrize("name,source,attrs,expected", CASES, ids=[c[0] for c in CASES])
def test_rewritten_object_has_the_original_settings(name, source, attrs, expected, cuda_mode):
    fixed = _rewrite(source)
    assert "cuda.amp" not in fixed and "cpu.amp" not in fixed, fixed

    original, caught = _build(source, forbid_future=False)
    assert any(issubclass(w.category, FutureWarning) for w in caught), "original did not warn"
    rewritten, _ = _build(fixed, forbid_future=True)  # a FutureWarning here raises

    for attr in attrs:
        assert getattr(rewritten, attr, MISSING) == getattr(original, attr, MISSING), (
            f"{attr}: {getattr(rewritten, attr, MISSING)!r} != {getattr(original, attr, MISSING)!r}"
            f"\n--- original\n{source}--- rewritten\n{fixed}"
        )
    enabled = getattr(original, "_enabled", True)
    device = getattr(original, "device", getattr(original, "_device", None))
    really_enabled = cuda_mode == "cuda-simulated" or device == "cpu" or torch.cuda.is_available()
    for attr, value in expected.items():
        if attr != "_enabled" and attr != "device" and attr != "_device" and not enabled:
            continue  # a disabled scaler does not store its settings
        if attr == "_enabled" and value and not really_enabled:
            continue  # CUDA unavailable: both objects disabled themselves (checked equal above)
        assert getattr(original, attr, MISSING) == value, (attr, getattr(original, attr, MISSING))


def test_cuda_simulation_really_enables_the_cuda_objects(monkeypatch):
    """Guard against a vacuous comparison: under the simulation the settings are stored."""
    monkeypatch.setattr(torch.cuda.amp.common, "amp_definitely_not_available", lambda: False)
    fixed = _rewrite("from torch.cuda.amp import GradScaler\nobj = GradScaler(1024.0, 3.0)\n")
    scaler, _ = _build(fixed, forbid_future=True)
    assert scaler._enabled is True
    assert scaler._init_scale == 1024.0 and scaler._growth_factor == 3.0


def test_naive_prepend_would_have_changed_the_meaning():
    """The reason positional arguments become keywords: `torch.amp.autocast("cuda", use_amp)`
    passes `use_amp` as the dtype."""
    fixed = _rewrite("import torch\nobj = torch.cuda.amp.autocast(False)\n")
    assert 'torch.amp.autocast("cuda", enabled=False)' in fixed
    with pytest.raises(Exception):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.amp.autocast("cuda", False).__enter__()


MODULE = textwrap.dedent(
    """\
    from torch.cuda.amp import GradScaler, autocast, custom_bwd, custom_fwd
    from torch.cpu import amp as cpu_amp
    import torch


    class Scale(torch.autograd.Function):
        @staticmethod
        @custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @custom_bwd
        def backward(ctx, g):
            return g * 2


    scaler = GradScaler(2.0**12, enabled=False)
    cpu_scaler = cpu_amp.GradScaler(init_scale=8.0)
    ctx = autocast(False)
    with cpu_amp.autocast(True, torch.bfloat16):
        y = Scale.apply(torch.ones(2))
    """
)


def _import_with_future_as_error(tmp_path, name: str, source: str) -> subprocess.CompletedProcess:
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-W", "error::FutureWarning", "-c", f"import {name}"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )


def test_rewritten_module_imports_without_future_warning(tmp_path):
    before = _import_with_future_as_error(tmp_path, "amp_before", MODULE)
    assert before.returncode != 0 and "FutureWarning" in before.stderr, before.stderr

    fixed = _rewrite(MODULE)
    assert "cuda.amp" not in fixed and "cpu_amp" not in fixed, fixed
    assert '@torch.amp.custom_bwd(device_type="cuda")' in fixed
    assert 'torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)' in fixed
    after = _import_with_future_as_error(tmp_path, "amp_after", fixed)
    assert after.returncode == 0, after.stderr
    # A second --fix finds nothing left to do.
    assert lint_source("example.py", fixed, SETTINGS, fix=True).fixed_source is None
