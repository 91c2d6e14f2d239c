"""The dtype op table (amplint/analysis/data/dtype_rules.py) checked op by op against torch (issue 26).

Every op name the table holds (autocast lists of both devices, keep/float/reduce/binary/same/
promote-all/bool/integer/loss groups, splits, factories, casts, module outputs), every in-place
variant, and every `torch.*`/`F.*`/Tensor method that blind sets A-K call, is spelled every way
Python spells it (`torch.op(...)`, `x.op(...)`, `F.op(...)`, `torch.linalg.*`, `x.op_(...)` on a
clone) with each argument shape below that runs; plus Python-number arithmetic (`x * n ** -0.5`
with `n` read from a shape). Each spelling becomes one line `r = <call>` of a program the dtype
fact reads (FileFacts), outside autocast with float16 / float32 inputs and inside
`torch.autocast("cpu", dtype=torch.bfloat16)` with float16 / float32 inputs. Each line then runs
under torch 2.13 (the same inputs, the same region) and its result must be what the fact
predicted: unknown is allowed, a wrong dtype is a failure.
"""

from __future__ import annotations

import math
import pathlib
import re
from typing import Dict, List, Optional, Tuple

import libcst as cst
import pytest

from amplint.analysis.data import dtype_rules as R

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
F = torch.nn.functional
ROOT = pathlib.Path(__file__).resolve().parent.parent
BLIND_SETS = ["fresh_layouts"] + [f"fresh_layouts_{s}" for s in "bcdefghijk"]

# the program's inputs: `x` (4, 4), diagonally dominant (invertible, a Cholesky factor), `v` (4,),
# `x3` (2, 4, 4), `x4` (1, 1, 4, 4), `x5` (1, 1, 2, 2, 2),
# `c3` (4, 3), `p` in (0, 1); `y` is float32 always (a mixed operand);
# `t` int64 indices, `b` a bool mask, `n` a Python int read from a shape, `z` complex64 (the
# real views of a spectrum)
INPUTS = """\
x = (torch.rand(4, 4) + torch.eye(4) * 4){cast}
v = (torch.rand(4) + 0.5){cast}
x3 = (torch.rand(2, 4, 4) + 0.5){cast}
x4 = (torch.rand(1, 1, 4, 4) + 0.5){cast}
p = (torch.rand(4, 4) * 0.8 + 0.1){cast}
x5 = (torch.rand(1, 1, 2, 2, 2) + 0.5){cast}
c3 = (torch.rand(4, 3) + 0.5){cast}
y = torch.rand(4, 4) + 0.5
t = torch.arange(4)
b = torch.rand(4, 4) > 0.5
n = x.shape[-1]
z = torch.view_as_complex(torch.rand(4, 2) + 0.5)
"""
# argument lists tried for an op whose first argument is a tensor (`X`: the receiver of the
# method spelling); every one that runs on float32 inputs becomes a line
PATTERNS = [
    "X", "X, X", "X, y", "y, X", "X, 1", "X, 0.5", "X, -1", "X, 2", "X, X, X", "X, y, X",
    "X, dim=-1", "X, 1, 2", "X, 0, 1", "X, (4,)", "X, [2, 2]", "X, 2, 1", "X, n",
    "X, b, 0.5", "X, b", "X, 0, t", "X, t", "X, 0, t.view(4, 1).expand(4, 4)",
    "x3, x3", "x3, x3, x3", "X, x3, x3", "x4, x4", "x3, 2", "x4, 1", "x3, x3.transpose(0, 2)",
    "v", "v, v", "X, v", "v, X, v", "X, v, v", "p, p", "X, t.float()", "[X, X]", "[X, y]",
    "(X, X)", "X, (1, 1, 1, 1)", "X, 4", "x4, 2", "b, X, X", "b, X, y", "x5, x5", "c3, c3",
    "X, 0, 0, 1", "X, 0, (2, 2)", "X, 2, 0, 1", "X, X, torch.ones(4)", "X, 0, t, X", "X, 0, t, 0.5",
    "X, (t,), v", "X, 0, t.view(4, 1).expand(4, 4), X", "X, (4, 4), 2.0", "X.view(8, 2)",
    "x4, 2, 2", "X, t.expand(4, 4)", "X, (4,), None, None, 1e-5", "X, 0.5, True", "z",
]
FACTORY_PATTERNS = ["4, 4", "(4, 4), (4, 1)", "(4, 4)", "0, 4, (4, 4)", "4", "0.0, 1.0, (4, 4)", "1, 4, 4",
                    "(4, 4), 2.0"]
MODULE_ARGS = ["", "4", "4, 4", "4, 4, 1", "1, 4", "4, 4, 4", "(4,)", "-1"]
MODULE_INPUTS = ["X", "x3", "x4", "X, X"]
# Python numbers with a tensor: `x * c` keeps x's dtype for any Python number c
EXPRESSIONS = [
    "X * 2", "X * 0.5", "2 * X", "X / 2", "X + 1e-8", "X * n", "X * n ** -0.5", "X / math.sqrt(n)",
    "X * (n // 2) ** -0.5", "X ** 2", "X ** 0.5", "2 ** X", "X * -n", "X * float(n)",
    "X * (1.0 / n)", "torch.is_nonzero(X[0, 0])", "X[0, 0].item()", "X.size(0)", "X.numel()", "X.dim()",
    "X.tolist()", "X @ X", "X @ y", "x3 @ x3", "X * y", "X + y", "y - X", "X > 0.5", "X == X",
    "-X", "X.T", "X.mT", "X[0]", "X[:, 1:]", "X.data", "X * True", "X // 2", "X % 2",
]
# names whose call changes the process (never run), and names no pattern above can call
NEVER = re.compile(r"^(set_|manual_seed|seed|save|load|use_deterministic|compile|jit|"
                   r"backward|register_|share_memory|resize|set$|copy_$|storage|untyped_storage|"
                   r"record_stream|data_ptr|pin_memory|cuda|to_sparse|to_mkldnn|numpy|apply_|map_|"
                   r"retain_grad|get_device|new$|_)")


# the table's sets that hold no torch op names (attributes, Python builtins, `math`, keywords)
NOT_OPS = {"INT_ATTRS", "KEEP_ATTRS", "INFO_ATTRS", "PYTHON_BUILTINS", "MATH_FLOAT", "MATH_INT",
           "MATH_BOOL", "MATH_CONSTANTS", "MODULE_PRIVATE_METHODS", "CAST_KEYWORDS", "OPTION_KEYWORDS"}


def table_ops() -> Dict[str, str]:
    """Every op name the table holds (each of its op sets, found by type, so a new set is
    checked too) -> the set it is in."""
    groups: Dict[str, set] = {}
    for name, value in vars(R).items():
        if name.isupper() and name not in NOT_OPS:
            if isinstance(value, R.OpGroup):
                groups[name] = set(value.ops)
            elif isinstance(value, frozenset) and all(isinstance(v, str) for v in value):
                groups[name] = set(value)
    groups["CAST_METHODS"] = set(R.CAST_METHODS)
    groups["NUMBER_FACTORIES"] = set(R.NUMBER_FACTORIES)
    found: Dict[str, str] = {}
    for group, ops in sorted(groups.items()):
        for op in ops:
            found.setdefault(op, group)
    for alias, op in R.FUNCTION_ALIASES.items():
        found.setdefault(alias.rsplit(".", 1)[-1], found.get(op, "alias"))
    return found


def blind_names() -> Tuple[set, set]:
    """(torch./F. functions, Tensor methods) that the blind sets A-K call."""
    functions, methods = set(), set()
    for name in BLIND_SETS:
        for path in sorted((ROOT / "benchmarks" / name).glob("*.txt")):
            text = path.read_text()
            for found in re.findall(r"\b(?:torch\.(?:nn\.functional\.)?|F\.)([a-z][a-z0-9_]*)\(", text):
                functions.add(found)
            for found in re.findall(r"\.([a-z][a-z0-9_]*)\(", text):
                if hasattr(torch.Tensor, found):
                    methods.add(found)
    return functions, methods


def spellings(op: str, as_method: bool, as_function: bool) -> List[str]:
    """The call texts of `op` that exist, with `X` for the tensor input."""
    out = []
    if NEVER.match(op):
        return out
    namespaces = [("torch.", torch, op), ("F.", F, op)]
    for prefix in ("linalg_", "fft_", "special_"):
        if op.startswith(prefix):
            namespaces.append((f"torch.{prefix[:-1]}.", getattr(torch, prefix[:-1]), op[len(prefix):]))
    for text, space, name in namespaces:
        if as_function and callable(getattr(space, name, None)):
            out.append(f"{text}{name}(ARGS)" if not name.endswith("_") else f"{text}{name}(CLONE)")
    if as_method:
        if callable(getattr(torch.Tensor, op, None)):
            out.append(f"X.clone().{op}(REST)" if op.endswith("_") else f"X.{op}(REST)")
        if callable(getattr(torch.Tensor, op + "_", None)) and not op.endswith("_"):
            out.append(f"X.clone().{op}_(REST)")
    return out


def _run(expr: str, env: dict):
    try:
        return True, eval(expr, env)  # noqa: S307 (our own program lines)
    except Exception:  # an argument pattern this op does not take, or no kernel for the dtype
        return False, None


def _env(cast: str) -> dict:
    torch.manual_seed(0)
    env = {"torch": torch, "F": F, "math": math}
    exec(INPUTS.format(cast=cast), env)  # noqa: S102
    return env


def lines() -> List[str]:
    """Every call text that runs on float32 inputs (the program's lines)."""
    env = _env("")
    ops = table_ops()
    functions, methods = blind_names()
    found: List[str] = []
    names = sorted(set(ops) | functions | methods)
    for op in names:
        env = _env("")  # a fresh copy: an in-place call changes nothing the next op reads
        factory = ops.get(op) in ("FLOAT_FACTORIES", "INT_FACTORIES", "NUMBER_FACTORIES", "RANGE_FACTORIES")
        for spelled in spellings(op, op in ops or op in methods, op in ops or op in functions):
            patterns = FACTORY_PATTERNS if factory and spelled.startswith("torch.") else PATTERNS
            for pattern in patterns:
                if "REST" in spelled:
                    if not pattern.startswith("X"):
                        continue
                    text = spelled.replace("REST", pattern[3:] if pattern != "X" else "")
                elif "CLONE" in spelled:  # an in-place function: on a copy of its input
                    if not pattern.startswith("X"):
                        continue
                    text = spelled.replace("CLONE", "X.clone()" + pattern[1:])
                else:
                    text = spelled.replace("ARGS", pattern)
                text = text.replace("X", "x")
                if text not in found and _run(text, env)[0]:
                    found.append(text)
    for module, op in sorted(R.MODULE_OPS.items()):
        made = next((f"{module}({a})" for a in MODULE_ARGS if _run(f"{module}({a})", env)[0]
                     and any(_run(f"{module}({a})({i})".replace("X", "x"), env)[0] for i in MODULE_INPUTS)), None)
        if made is not None:
            for inputs in MODULE_INPUTS:
                text = f"{made}({inputs})".replace("X", "x")
                if _run(text, env)[0]:
                    found.append(text)
    found += [e.replace("X", "x") for e in EXPRESSIONS if _run(e.replace("X", "x"), env)[0]]
    return found


def kind_of(result) -> Optional[str]:
    if isinstance(result, torch.Tensor):
        text = str(result.dtype).replace("torch.", "")
        return "integer" if text.startswith(("int", "uint")) else text
    if isinstance(result, bool):
        return "pybool"
    if isinstance(result, int):
        return "pyint"
    if isinstance(result, float):
        return "pyfloat"
    return None  # a tuple, a module, anything else


def check(texts: List[str], cast: str, region: bool) -> Tuple[int, int, List[str]]:
    """(lines run, predictions confirmed, failures) for one input dtype, in or outside a region."""
    head = "import math\nimport torch\nimport torch.nn.functional as F\n" + INPUTS.format(cast=cast)
    indent = "    " if region else ""
    body = "".join(f"{indent}r{i} = {text}\n" for i, text in enumerate(texts))
    source = head + ('with torch.autocast("cpu", dtype=torch.bfloat16):\n' if region else "") + body
    from amplint.analysis.facts import FileFacts

    module = cst.parse_module(source)
    facts = FileFacts(module, ())
    statements = module.body[-1].body.body if region else module.body[-len(texts):]
    env = _env(cast)
    ran = confirmed = 0
    failures = []
    for text, statement in zip(texts, statements):
        value = facts.dtypes.values.get(id(statement.body[0].value))
        if region:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                ok, result = _run(text, env)
        else:
            ok, result = _run(text, env)
        if not ok:
            continue
        ran += 1
        if value is None:
            continue
        if value.conditional and re.search(r"\bz\b", text):
            continue  # a conditional value holds for floating operands of unknown dtype; `z` is complex
        actual = kind_of(result)
        options = {"bfloat16" if o == "autocast" else o for o in value.options}
        if actual not in options:
            failures.append(f"`{text}`: predicted {sorted(options)}, torch gave {actual}")
        else:
            confirmed += 1
    return ran, confirmed, failures


_LINES: List[str] = []


def _all_lines() -> List[str]:
    if not _LINES:
        _LINES.extend(lines())
    return _LINES


def test_every_table_op_is_spelled_or_has_no_python_name():
    """Each op of the table runs as at least one line, or torch has no Python name for it (an
    aten-internal op such as `_thnn_fused_lstm_cell`), or it is in NO_PLAIN_CALL with why."""
    texts = _all_lines()
    called = set()
    for text in texts:
        for name in re.findall(r"([a-z_][a-z0-9_]*)\(", text):
            called.update((name, name.rstrip("_")))
    missing = []
    for op in sorted(table_ops()):
        short = op
        for prefix in ("linalg_", "fft_", "special_"):
            if op.startswith(prefix):
                short = op[len(prefix):]
        if short in called or op in called or op in NO_PLAIN_CALL or not _python_names(op):
            continue
        missing.append(op)
    assert not missing, missing


def _python_names(op: str) -> bool:
    """torch has a Python name for aten `op` (else it is aten-internal: `_thnn_fused_lstm_cell`,
    `upsample_bilinear2d` (F.interpolate's kernels), `cross_entropy_loss` (F.cross_entropy))."""
    spaces = [torch, F, torch.Tensor] + [getattr(torch, p[:-1]) for p in ("linalg_", "fft_", "special_")
                                         if op.startswith(p)]
    names = [op] + [op[len(p):] for p in ("linalg_", "fft_", "special_") if op.startswith(p)]
    return any(callable(getattr(space, name, None)) for space in spaces for name in names) \
        and not op.startswith("_")


# ops with a Python spelling that no argument pattern above calls, and why
NO_PLAIN_CALL = {
    "_convolution": "aten-internal signature (transposed/output_padding/groups flags)",
    "ctc_loss": "needs log-probs (T, N, C) with target lengths",
    "stft": "needs n_fft and a 1-D signal longer than it",
    "grid_sampler": "grid (N, H, W, 2) of coordinates",
    "lu_solve": "an LU factorization and its pivots",
    "ormqr": "the Householder reflectors of geqrf",
    "polar": "abs and angle tensors (runs: float32 only)",
    "fake_quantize_per_tensor_affine": "scale, zero point and quant range",
    "conv_tbc": "input (T, B, C) with weight (k, C, out) and bias",
    "lstm_cell": "hidden states and four weight tensors",
    "gru_cell": "hidden state and four weight tensors",
    "rnn_tanh_cell": "hidden state and four weight tensors",
    "rnn_relu_cell": "hidden state and four weight tensors",
    "bilinear": "a weight (out, in1, in2)",
    "embedding": "indices and a weight",
    "cuda": "a CUDA device (none here)", "pin_memory": "a CUDA device (none here)",
    "convolution": "aten signature (transposed, output_padding, groups)",
    "cudnn_convolution": "cuDNN (CUDA only)", "cudnn_convolution_transpose": "cuDNN (CUDA only)",
    "mkldnn_rnn_layer": "oneDNN RNN weights and states", "grid_sampler_2d": "a sampling grid",
    "grid_sampler_3d": "a sampling grid", "max_unpool2d": "the indices of a max_pool2d",
    "max_unpool3d": "the indices of a max_pool3d", "fractional_max_pool3d": "a 5-D input and output size",
    "multilabel_margin_loss": "-1-terminated label rows",
}


@pytest.mark.parametrize("cast,region", [(".half()", False), ("", False), (".half()", True), ("", True)],
                         ids=["float16", "float32", "float16-cpu-autocast", "float32-cpu-autocast"])
def test_fact_equals_torch_for_every_op(cast, region):
    texts = _all_lines()
    ran, confirmed, failures = check(texts, cast, region)
    assert ran > 500 and confirmed > 300, (ran, confirmed)
    assert not failures, "\n".join(failures)


if __name__ == "__main__":  # a report: how many lines each setting runs and confirms
    texts = _all_lines()
    print(len(texts), "lines")
    for cast, region in [(".half()", False), ("", False), (".half()", True), ("", True)]:
        ran, confirmed, failures = check(texts, cast, region)
        print(f"cast={cast!r} region={region}: ran {ran}, confirmed {confirmed}, wrong {len(failures)}")
        for failure in failures:
            print("   ", failure)
