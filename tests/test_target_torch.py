"""The project's target torch: where it is read from, and that no fix writes an API the target
lacks. Every rule's own examples are fixed for projects targeting torch 1.8, 1.13, 2.0, 2.3 and
the newest; each torch name a fix writes is looked up in amplint/analysis/data/torch_versions.py (and
must be there, introduced no later than the target) and on the installed torch."""

from __future__ import annotations

import ast
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.data.torch_versions import INTRODUCED, TorchTarget, introduced
from amplint.analysis.engine import Settings, lint_source, valid_python
from amplint.analysis.rules import all_rules
from amplint.workspace.torch_requirement import detect, lower_bound, parse_version

PROJECTS = Path(__file__).parent / "projects"
TARGETS = [(1, 8), (1, 13), (2, 0), (2, 3), None]


# -- reading the requirement ------------------------------------------------------------------

@pytest.mark.parametrize("spec,bound", [
    (">=1.8.1", (1, 8)), (">=1.8,<2", (1, 8)), ("==1.13.1+cu117", (1, 13)), ("~=2.0.1", (2, 0)),
    ("=1.8.1", (1, 8)), ("^1.10", (1, 10)), ("==1.8.*", (1, 8)), ("<2.0", None), ("", None),
    ('>=1.9; python_version < "3.12"', (1, 9)), ("!=1.12.0", None),
])
def test_lower_bound(spec, bound):
    assert lower_bound(spec) == bound


@pytest.mark.parametrize("text", ["1.x", "latest", "", "two"])
def test_not_a_version(text):
    assert parse_version(text) is None


@pytest.mark.parametrize("files,version,source", [
    ({"requirements.txt": "torch>=1.8.1\ntorchvision>=0.9.1\n"}, (1, 8), "requirements.txt"),
    ({"requirements/base.txt": "numpy\ntorch==1.10.2  # cu113\n"}, (1, 10), "requirements/base.txt"),
    ({"pyproject.toml": "[project]\nname='x'\ndependencies=['numpy', 'torch>=2.0']\n"},
     (2, 0), "pyproject.toml"),
    ({"pyproject.toml": "[project]\nname='x'\n[project.optional-dependencies]\n"
                        "train=['torch>=1.13,<3']\n"}, (1, 13), "pyproject.toml"),
    ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    torch>=1.9\n"}, (1, 9), "setup.cfg"),
    # setup.py is read with ast: running it would fail
    ({"setup.py": "import sys\nsys.exit('never run')\nfrom setuptools import setup\n"
                  "setup(name='x', install_requires=['torch >= 1.11', 'torchvision'])\n"},
     (1, 11), "setup.py"),
    ({"environment.yml": "dependencies:\n  - python=3.8\n  - pytorch=1.8.1\n  - pip:\n"
                         "    - timm==0.3.2\n"}, (1, 8), "environment.yml"),
    # several requirements: the lowest bound is the target
    ({"requirements.txt": "torch>=2.1\n", "setup.py": "setup(install_requires=['torch>=1.12'])\n"},
     (1, 12), "setup.py"),
    # Lightning's layout: requirements.txt includes requirements/pytorch/base.txt
    ({"requirements.txt": "-r ./requirements/pytorch/base.txt\n",
      "requirements/pytorch/base.txt": "torch >=2.1.0, <2.10.0\n"}, (2, 1),
     "requirements/pytorch/base.txt"),
    ({"requirements.txt": "-r ../outside.txt\nnumpy\n"}, None, ""),
    # no lower bound, or no torch at all: the newest
    ({"requirements.txt": "torch\npytorch-lightning>=1.5\ntorchaudio==0.8\n"}, None, ""),
    ({}, None, ""),
])
def test_detect(tmp_path, files, version, source):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert detect(str(tmp_path)) == TorchTarget(version, source)


# -- configuration and command line -----------------------------------------------------------

DEPRECATED = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"


def run_cli(root: Path, *args: str):
    old = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(cli, ["--no-cache", *args, "."])
    finally:
        os.chdir(old)


def test_config_target_wins_over_the_requirement(tmp_path):
    (tmp_path / "a.py").write_text(DEPRECATED)
    (tmp_path / "requirements.txt").write_text("torch>=1.8\n")
    out = run_cli(tmp_path).stdout
    assert "not fixed: torch.amp.GradScaler needs torch >= 2.3; this project targets 1.8 " \
           "(from requirements.txt)" in out
    assert "[*]" not in out
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\ntarget-torch = \"2.4\"\n")
    out = run_cli(tmp_path).stdout
    assert "not fixed" not in out and "[*]" in out
    out = run_cli(tmp_path, "--target-torch", "2.2").stdout  # the command line wins
    assert "this project targets 2.2 (from --target-torch)" in out


@pytest.mark.parametrize("value", ['"latest"', "1.8", '"1.x"'])
def test_bad_target_is_one_config_error_line(tmp_path, value):
    (tmp_path / "a.py").write_text(DEPRECATED)
    (tmp_path / "pyproject.toml").write_text(f"[tool.amplint]\ntarget-torch = {value}\n")
    result = run_cli(tmp_path)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pyproject.toml: `target-torch` must be a torch version" in lines[0]


def test_bad_command_line_target(tmp_path):
    (tmp_path / "a.py").write_text(DEPRECATED)
    result = run_cli(tmp_path, "--target-torch", "new")
    assert result.exit_code == 2 and "`target-torch` must be a torch version" in result.stderr


# -- what the fixes write -----------------------------------------------------------------------

def _aliases(tree: ast.AST) -> dict:
    """local name -> the torch path it stands for."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "torch":
                    out[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else "torch")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _chain(node: ast.AST):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def torch_names(source: str) -> set:
    """The torch APIs a source names: `torch.X.Y` (through any import alias), `Tensor.new_*`
    methods, and `API(keyword=)` for the keywords the table tracks."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(getattr(node, "_parent", None), ast.Attribute):
            chain = _chain(node)
            if chain and chain[0] in aliases:
                names.add(".".join([aliases[chain[0]]] + chain[1:]))
            elif chain and chain[-1].startswith("new_") and len(chain) >= 2:
                names.add(f"Tensor.{chain[-1]}")
        if isinstance(node, ast.Call):
            chain = _chain(node.func)
            full = None
            if chain and chain[0] in aliases:
                full = ".".join([aliases[chain[0]]] + chain[1:])
            for keyword in node.keywords:
                if full and f"{full}({keyword.arg}=)" in INTRODUCED:
                    names.add(f"{full}({keyword.arg}=)")
        for child in ast.iter_child_nodes(node):
            child._parent = node  # type: ignore[attr-defined]
    # keep only whole chains (drop `torch.amp` when `torch.amp.GradScaler` is there)
    return {n for n in names if not any(o != n and o.startswith(n + ".") for o in names)}


def table_key(name: str):
    """The table entry for a name a fix wrote (`x.dtype`, a tensor's attribute, needs none)."""
    if name in INTRODUCED:
        return name
    if name.endswith(".dtype"):
        return "dtype"
    return None


def resolves_on_installed_torch(name: str) -> bool:
    torch = pytest.importorskip("torch")
    if name.startswith("Tensor."):
        return hasattr(torch.Tensor, name.split(".", 1)[1])
    base, _, keyword = name.partition("(")
    obj = torch
    for part in base.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    if keyword:
        keyword = keyword.rstrip("=)")
        try:
            return keyword in inspect.signature(obj).parameters
        except ValueError:  # a builtin (torch.softmax): call it with the keyword
            assert keyword == "dtype", name
            return obj(torch.ones(2), 0, dtype=torch.float32).dtype == torch.float32
    return True


FIX_CASES = [
    pytest.param(rule, i, case, target, id=f"{code}-{i}-{target or 'newest'}")
    for code, rule in all_rules().items()
    for i, case in enumerate(rule.flag)
    if case.fixed is not None
    for target in TARGETS
]


@pytest.mark.parametrize("rule,index,case,target", FIX_CASES)
def test_every_fix_writes_only_what_the_target_has(rule, index, case, target):
    settings = Settings(frozenset({rule.code}), unsafe_fixes=True, torch=TorchTarget(target, "test"))
    result = lint_source("example.py", case.code, settings, fix=True)
    assert not result.errors
    if result.fixed_source is None:
        # no fix at this target: the finding says which API and version it waited for
        assert target is not None
        assert any("not fixed: " in d.message and "needs torch >= " in d.message
                   for d in result.diagnostics), [d.message for d in result.diagnostics]
        return
    assert valid_python(result.fixed_source)
    compile(result.fixed_source, "example.py", "exec")
    written = torch_names(result.fixed_source) - torch_names(case.code)
    for name in written:
        key = table_key(name)
        assert key is not None, f"{rule.code} writes {name}: add it to amplint/analysis/data/torch_versions.py"
        if key != "dtype" and target is not None:
            assert introduced(key) <= target, f"{rule.code} writes {name} for torch {target}"
        assert resolves_on_installed_torch(name), name
    if target is None:
        assert result.fixed_source == case.fixed  # the newest target gets today's fixes


@pytest.mark.parametrize("rule,index,case,target", FIX_CASES)
def test_fixed_example_still_runs_on_installed_torch(rule, index, case, target):
    """The fixed example's module body (imports, decorators such as `@torch.amp.custom_fwd(
    device_type="cuda")`, module-level statements) runs on the installed torch wherever the
    original did. An example that needs names it does not define is skipped."""
    pytest.importorskip("torch")
    try:
        exec(compile(case.code, "example.py", "exec"), {"__name__": "example"})
    except Exception as error:  # noqa: BLE001 -- the example is a fragment
        pytest.skip(f"the original example does not run alone: {error!r}")
    settings = Settings(frozenset({rule.code}), unsafe_fixes=True, torch=TorchTarget(target, "test"))
    result = lint_source("example.py", case.code, settings, fix=True)
    if result.fixed_source is None:
        return
    exec(compile(result.fixed_source, "example.py", "exec"), {"__name__": "example"})


def test_table_entries_exist_on_installed_torch():
    for name in INTRODUCED:
        if name.startswith("GradScaler"):
            continue  # methods and keywords of torch.cuda.amp.GradScaler: checked below
        assert resolves_on_installed_torch(name), name
    torch = pytest.importorskip("torch")
    assert hasattr(torch.cuda.amp.GradScaler, "unscale_")
    assert "enabled" in inspect.signature(torch.cuda.amp.GradScaler).parameters


# -- a project shaped like facebookresearch/mae (README: PyTorch 1.8.1+) -------------------------

def mae_copy(tmp_path: Path, target=None) -> Path:
    root = tmp_path / "mae"
    shutil.copytree(PROJECTS / "mae_old_torch", root)
    (root / ".git").mkdir()  # the project root
    if target is not None:  # the twin: the same project, declared to target a newer torch
        (root / "pyproject.toml").write_text(f'[tool.amplint]\ntarget-torch = "{target}"\n')
    return root


def _written(root: Path, before: dict) -> set:
    names = set()
    for path, text in before.items():
        names |= torch_names((root / path).read_text()) - torch_names(text)
    return names


def _sources(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def test_mae_pinned_to_torch_18_gets_no_fix_absent_from_18(tmp_path):
    root = mae_copy(tmp_path)
    before = _sources(root)
    result = run_cli(root, "--fix")
    assert "this project targets 1.8 (from requirements.txt)" in result.stdout
    assert all(introduced(table_key(n)) <= (1, 8) for n in _written(root, before)
               if table_key(n) != "dtype")
    assert "torch.amp" not in "".join(_sources(root).values())
    _runs(root)


def test_mae_twin_targeting_24_gets_todays_fixes(tmp_path):
    root = mae_copy(tmp_path, "2.4")
    before = _sources(root)
    run_cli(root, "--fix")
    written = _written(root, before)
    assert {"torch.amp.autocast", "torch.amp.GradScaler"} <= written
    assert all(introduced(table_key(n)) <= (2, 4) for n in written if table_key(n) != "dtype")
    assert "torch.cuda.amp" not in "".join(_sources(root).values())
    _runs(root)


def _runs(root: Path) -> None:
    """The fixed project trains one epoch on the installed torch (CPU)."""
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-W", "ignore", "main_pretrain.py"], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


BCE_IN_REGION = (
    "import torch\nimport torch.nn.functional as F\n"
    "with torch.cuda.amp.autocast():\n"
    "    p = model(x)\n"
    "    loss = F.binary_cross_entropy(p, y)\n"
)
NOGRAD_THEN_GRAD = (
    "import torch\n"
    "with torch.cuda.amp.autocast():\n"
    "    with torch.no_grad():\n"
    "        t = model(a)\n"
    "    out = model(b)\n"
)


def fixed(source, code, target):
    settings = Settings(frozenset({code}), torch=TorchTarget(target, "requirements.txt"))
    return lint_source("a.py", source, settings, fix=True)


def test_fp32_island_before_torch_autocast():
    old = fixed(BCE_IN_REGION, "AMP102", (1, 8)).fixed_source
    assert "with torch.cuda.amp.autocast(enabled=False):" in old and "torch.autocast" not in old
    assert "with torch.autocast(\"cuda\", enabled=False):" in fixed(BCE_IN_REGION, "AMP102", (1, 10)).fixed_source


def test_nograd_cache_hazard_not_reported_where_every_supported_torch_has_the_fix():
    def codes(target):
        settings = Settings(frozenset({"AMP150"}), torch=TorchTarget(target, "pyproject.toml"))
        return [d.code for d in lint_source("a.py", NOGRAD_THEN_GRAD, settings).diagnostics]

    assert codes((2, 10)) == ["AMP150"]
    assert codes((2, 11)) == [] and codes((2, 13)) == []
    assert codes(None) == ["AMP150"]  # no requirement found: an older torch may run it


def test_installed_torch_agrees_with_the_fixed_in_table():
    """FIXED_IN says torch >= 2.11 keeps gradients after a no_grad forward in the same region."""
    torch = pytest.importorskip("torch")
    from amplint.analysis.data.torch_versions import FIXED_IN
    installed = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    layer = torch.nn.Linear(2, 1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.no_grad():
            layer(torch.randn(1, 2))
        out = layer(torch.randn(1, 2))
    assert (out.grad_fn is not None) == (installed >= FIXED_IN["AMP150"][0])


def test_cache_enabled_not_written_before_110():
    result = fixed(NOGRAD_THEN_GRAD, "AMP150", (1, 8))
    assert result.fixed_source is None
    assert ["`cache_enabled=` needs torch >= 1.10; this project targets 1.8 (from requirements.txt)"
            in d.message for d in result.diagnostics] == [True]
    assert "cache_enabled=False" in fixed(NOGRAD_THEN_GRAD, "AMP150", (1, 10)).fixed_source


@pytest.mark.parametrize("target,written", [
    ((1, 8), set()), ((1, 13), {"torch.amp.autocast"}), ((2, 3), {"torch.amp.autocast", "torch.amp.GradScaler"}),
    ((2, 4), {"torch.amp.autocast", "torch.amp.GradScaler", "torch.amp.custom_fwd"}),
])
def test_amp130_replacement_by_target(target, written):
    source = (
        "import torch\n"
        "scaler = torch.cuda.amp.GradScaler()\n"
        "ctx = torch.cuda.amp.autocast()\n"
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
        "    def forward(c, x):\n"
        "        return x\n"
    )
    result = fixed(source, "AMP130", target)
    assert torch_names(result.fixed_source or source) - torch_names(source) == written
    unfixed = [d for d in result.diagnostics if "not fixed" in d.message]
    assert len(unfixed) == 3 - len(written)


def test_every_table_entry_records_the_release_it_was_checked_in():
    """Each entry says where benchmarks/torch_versions.py found it: `torch X.Y.Z: file:line`
    (or a libtorch_python signature for 1.0's C APIs), in the release the entry gives."""
    for name, (version, evidence) in INTRODUCED.items():
        release = f"torch {version[0]}.{version[1]}."
        assert evidence.startswith(release), (name, evidence)
        assert ".py:" in evidence or "libtorch_python" in evidence, (name, evidence)
