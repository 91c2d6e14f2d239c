"""How torch decides the dtype of a tensor value: the one table the dtype fact
(amplint.analysis.facts.dtypes) reads. Taken from torch 2.13.0's own sources; each group names where.

Autocast op lists are aten op names (overload names dropped). The CUDA lists are macros in
`aten/src/ATen/autocast_mode.h`, shipped in the torch 2.13.0 wheel as
`torch/include/ATen/autocast_mode.h` (line numbers below are that file's), and registered for
CUDA in `aten/src/ATen/autocast_mode.cpp` (`TORCH_LIBRARY_IMPL(aten, Autocast, m)`). The CPU
lists are written out in `autocast_mode.cpp` (`TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`; line
numbers counted in pytorch/pytorch at commit 008ec6b1840c, the wheel ships no .cpp);
tests/test_dtype_rules.py re-derives the CPU behaviour of every Python spelling by execution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional


@dataclass(frozen=True)
class OpGroup:
    ops: FrozenSet[str]
    source: str


def _ops(text: str) -> FrozenSet[str]:
    return frozenset(text.split())


# -- autocast, CUDA ---------------------------------------------------------------------------
CUDA_LOWER_PRECISION = OpGroup(_ops("""
    _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
    convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm
    chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell
    rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention scaled_dot_product_attention
    cudnn_convolution cudnn_convolution_transpose
"""), "aten/src/ATen/autocast_mode.h:820 AT_FORALL_LOWER_PRECISION_FP; "
      "aten/src/ATen/autocast_mode.cpp:173-175 (plus cudnn_convolution*)")

CUDA_FP32 = OpGroup(_ops("""
    acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus
    layer_norm native_layer_norm rms_norm group_norm frobenius_norm nuclear_norm cosine_similarity
    poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss
    smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss
    triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm
    logsumexp upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
    _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d
    upsample_bilinear2d _upsample_bilinear2d_aa upsample_trilinear3d upsample_bicubic2d
    _upsample_bicubic2d_aa
    prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm sum
    norm
"""), "aten/src/ATen/autocast_mode.h:855 AT_FORALL_FP32, :916 AT_FORALL_FP32_SET_OPT_DTYPE, "
      ":929 AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE (norm); autocast_mode.cpp:180,186,196")

CUDA_PROMOTE = OpGroup(_ops("""
    addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add
"""), "aten/src/ATen/autocast_mode.h:946 AT_FORALL_PROMOTE; autocast_mode.cpp:202")

# -- autocast, CPU ----------------------------------------------------------------------------
CPU_LOWER_PRECISION = OpGroup(_ops("""
    conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm _addmm_activation addbmm linear
    _convolution matmul conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d
    conv_transpose3d prelu scaled_dot_product_attention _native_multi_head_attention
"""), "aten/src/ATen/autocast_mode.cpp:325-350 (AutocastCPU, lower_precision_fp)")

CPU_FP32 = OpGroup(_ops("""
    avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist
    grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex cholesky
    cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d
    max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d
    replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d
    hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss huber_loss
    margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div
    multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2
    fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft
    fft_ihfft linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals
    linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv
    linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
    fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d multilabel_margin_loss_forward
    linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex
"""), "aten/src/ATen/autocast_mode.cpp:352-453 (AutocastCPU, fp32)")

CPU_PROMOTE = OpGroup(_ops("stack cat index_copy"),
                      "aten/src/ATen/autocast_mode.cpp:455-459 (AutocastCPU, promote)")

AUTOCAST_LISTS: Dict[str, Dict[str, OpGroup]] = {
    "cuda": {"lower": CUDA_LOWER_PRECISION, "fp32": CUDA_FP32, "promote": CUDA_PROMOTE},
    "cpu": {"lower": CPU_LOWER_PRECISION, "fp32": CPU_FP32, "promote": CPU_PROMOTE},
}
# the dtype a region runs its lower-precision ops in when it names none
DEFAULT_REGION_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}  # autocast_mode.cpp:56-78


def autocast_policy(device: Optional[str], op: str) -> Optional[str]:
    """"lower" | "fp32" | "promote" | "none" for aten `op` under an autocast region on
    `device`; for an unknown device, the policy both lists agree on, else None."""
    devices = [device] if device in AUTOCAST_LISTS else list(AUTOCAST_LISTS)
    if device is not None and device not in AUTOCAST_LISTS:
        return None
    found = set()
    for name in devices:
        policy = "none"
        for kind, group in AUTOCAST_LISTS[name].items():
            if op in group.ops:
                policy = kind
        found.add(policy)
    return found.pop() if len(found) == 1 else None


# -- what an op does to its inputs' dtype outside autocast (and under it when unlisted) -------
# Source: torch 2.13.0 semantics, aten/src/ATen/native/native_functions.yaml (the op's schema)
# and c10/core/ScalarType.h promoteTypes; checked by execution in tests/test_dtype_rules.py.
#
# "keep": the first tensor argument's dtype, whatever it is (shape ops, indexing-like ops,
# piecewise-linear activations, in-place ops).
KEEP = _ops("""
    view reshape transpose permute contiguous detach clone flatten unflatten squeeze unsqueeze t
    expand expand_as view_as reshape_as narrow repeat flip roll relu relu6 neg negative abs
    cuda cpu requires_grad_ detach_ amax amin movedim
    swapaxes index_select gather masked_fill tril triu diagonal diag select unfold pin_memory
    dropout hardtanh leaky_relu pad zero_ fill_ fill_diagonal_ index_fill index_fill_
    repeat_interleave tile squeeze_ unsqueeze_ t_ sign nan_to_num round floor ceil trunc
    masked_select take roll rot90 fliplr flipud bernoulli
""")
# "clamp": the input's dtype with Python-number bounds (`x.clamp(min=1e-6)`); tensor bounds
# promote with it (`x16.clamp(y32)` is float32; aten/src/ATen/native/TensorCompare.cpp clamp's
# result_type over input, min and max); checked in tests/test_op_table_torch.py
CLAMP = _ops("clamp clip clamp_min clamp_max")
# "float": a floating input keeps its dtype; an integer or bool input gives the default float
# dtype (torch's "int-to-float" unary ops); mean/var/std of an integer input raise.
FLOAT_KEEP = _ops("""
    sigmoid tanh exp expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh
    erf erfinv reciprocal gelu silu mish elu selu celu softplus softsign logsigmoid hardsigmoid
    hardswish softmax log_softmax mean var std logsumexp norm layer_norm group_norm normalize
""")
# "reduce": a floating input keeps its dtype; an integer or bool input gives int64
REDUCE = _ops("sum prod cumsum cumprod nansum")
# "binary": type promotion between the tensor operands (c10/core/ScalarType.h promoteTypes,
# dimension- and category-aware: aten/src/ATen/native/TypeProperties.cpp result_type)
BINARY = _ops("""
    add sub subtract mul multiply div divide true_divide maximum minimum fmax fmin remainder
    fmod atan2 hypot pow copysign
""")
# "same": operands must share a dtype (matmul family): that dtype, or an error
SAME = _ops("""
    mm bmm matmul mv dot vdot addmm addmv addbmm baddbmm linear bilinear conv1d conv2d conv3d
    conv_transpose1d conv_transpose2d conv_transpose3d einsum prelu scaled_dot_product_attention
    tensordot
""")
# "promote-all": every tensor of a sequence argument promotes together (cat, stack, where's
# two values)
PROMOTE_ALL = _ops("cat concat concatenate stack hstack vstack where")
# "bool": comparisons and predicates
BOOL = _ops("""
    eq ne lt le gt ge greater less not_equal isnan isinf isfinite isclose logical_and
    logical_or logical_not logical_xor isneginf isposinf signbit
""")
# "pybool": a Python bool, not a tensor (`torch.equal(a, b)`, `torch.allclose(a, b)`)
PYTHON_BOOL = _ops("equal allclose is_nonzero")
# "integer": index results
INTEGER = _ops("argmax argmin argsort nonzero bucketize searchsorted count_nonzero")
# "window": the spectrum promotes the input with the `window=` tensor (torch 2.13: a float16
# signal with a float32 window gives complex64), and the real views of a complex tensor, whose
# precision is the complex dtype's (complex64 -> float32)
WINDOW_PROMOTE = _ops("stft")
REAL_VIEWS = _ops("view_as_real real imag")
# losses and other ops that reduce two float inputs to their (shared) dtype
LOSS = _ops("""
    mse_loss l1_loss smooth_l1_loss huber_loss kl_div binary_cross_entropy_with_logits
    cross_entropy_loss nll_loss cosine_similarity cdist
""")

# Python spellings -> aten op where the name differs
FUNCTION_ALIASES: Dict[str, str] = {
    "torch.nn.functional.cross_entropy": "cross_entropy_loss",
    "torch.nn.functional.relu": "relu", "torch.nn.functional.relu6": "relu6",
    "torch.nn.functional.scaled_dot_product_attention": "scaled_dot_product_attention",
    "torch.concat": "cat", "torch.concatenate": "cat",
}
FUNCTION_PREFIXES = {  # qualified prefix -> prefix of the aten name
    "torch.nn.functional.": "", "torch.linalg.": "linalg_", "torch.fft.": "fft_",
    "torch.special.": "special_", "torch.": "",
}

# -- explicit casts, factories ----------------------------------------------------------------
# torch.<name> without dtype= gives the default dtype (float32 unless torch.set_default_dtype)
FLOAT_FACTORIES = _ops("zeros ones empty rand randn eye linspace logspace empty_strided")
RANGE_FACTORIES = _ops("arange linspace logspace")  # always 1-dim, whatever the dtype
INT_FACTORIES = _ops("randint randperm")
# the default dtype too when their leading arguments are Python numbers and a size is given
# (`torch.normal(0, 0.01, (n, d))`); with tensor arguments they take the tensors' dtype
NUMBER_FACTORIES = {"normal": 2}  # name -> how many leading number arguments
# take their dtype from the value they are passed (`torch.zeros_like(x)`) or the receiver
# (`x.new_zeros(n)`), unless dtype= is given
LIKE_FACTORIES = _ops("zeros_like ones_like empty_like rand_like randn_like full_like")
NEW_FACTORIES = _ops("new_zeros new_ones new_empty new_full new_tensor")
CAST_METHODS: Dict[str, str] = {
    "half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64",
    "long": "integer", "int": "integer", "short": "integer", "byte": "integer",
    "char": "integer", "bool": "bool",
}
DTYPE_NAMES: Dict[str, str] = {
    "torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
    "torch.float32": "float32", "torch.float": "float32", "torch.float64": "float64",
    "torch.double": "float64", "torch.int64": "integer", "torch.long": "integer",
    "torch.int32": "integer", "torch.int": "integer", "torch.int16": "integer",
    "torch.short": "integer", "torch.int8": "integer", "torch.uint8": "integer",
    "torch.bool": "bool",
}
# Keywords of `.to(...)`/`.type(...)` that move a tensor without naming its dtype
CAST_KEYWORDS = frozenset({"non_blocking", "copy", "memory_format", "device"})

# -- not tensors ------------------------------------------------------------------------------
# Tensor attributes and methods whose result is metadata or a Python number, never a tensor
# (`x.shape[-1]`, `x.size(0)`, `x.item()`), and the Python builtins / modules that compute on
# Python numbers: a value built from them is no float16 tensor.
INT_ATTRS = frozenset({"ndim"})
KEEP_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "grad"})  # tensor attributes of its dtype
INFO_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "is_cuda", "requires_grad"})
SIZE_METHODS = _ops("size dim numel nelement element_size ndimension")
PYTHON_METHODS = SIZE_METHODS | _ops("item tolist")
# keywords of torch functions that are options, never a tensor (`F.grid_sample(..., mode=,
# padding_mode=, align_corners=)`, `torch.stack(..., dim=)`): their values mix into no result
OPTION_KEYWORDS = _ops("""
    dim keepdim mode padding_mode align_corners device steps base antialias recompute_scale_factor
    scale_factor size
""")
PYTHON_BUILTINS = _ops("float int len abs min max round sum pow")
# builtins that return a Python number of one type whatever they are given (`float(t)` of a
# one-element tensor too): `x * float(n)` keeps x's dtype; `abs`/`min`/`round` of a tensor are tensors
PYTHON_CONVERSIONS: Dict[str, str] = {"float": "pyfloat", "int": "pyint", "len": "pyint", "bool": "pybool"}
PYTHON_MODULES = ("math.", "numpy.", "np.", "random.")
# Python's `math` module: its functions return Python numbers whatever they are given (a
# one-element tensor is read through `__float__`/`__index__`); checked on Python 3.11
MATH_FLOAT = _ops("sqrt exp expm1 log log1p log2 log10 pow sin cos tan asin acos atan atan2 sinh cosh "
                  "tanh asinh acosh atanh erf erfc gamma lgamma fabs hypot degrees radians fmod copysign")
MATH_INT = _ops("floor ceil isqrt factorial gcd comb perm")
MATH_BOOL = _ops("isnan isinf isfinite isclose")
MATH_CONSTANTS = _ops("pi e tau inf nan")
# c10/core/ScalarType.h promoteTypes, for the floating dtypes
FLOAT_ORDER = ("float16", "bfloat16", "float32", "float64")


def promote_floats(a: str, b: str) -> str:
    if a == b:
        return a
    if "float64" in (a, b):
        return "float64"
    return "float32"  # float16 with bfloat16 promotes to float32 as well


# -- module outputs ---------------------------------------------------------------------------
# torch.nn module -> the functional op its forward runs (torch/nn/modules/*.py forward)
MODULE_OPS: Dict[str, str] = {
    "torch.nn.Linear": "linear", "torch.nn.LazyLinear": "linear", "torch.nn.Bilinear": "bilinear",
    "torch.nn.Conv1d": "conv1d", "torch.nn.Conv2d": "conv2d", "torch.nn.Conv3d": "conv3d",
    "torch.nn.ConvTranspose1d": "conv_transpose1d", "torch.nn.ConvTranspose2d": "conv_transpose2d",
    "torch.nn.ConvTranspose3d": "conv_transpose3d", "torch.nn.PReLU": "prelu",
    "torch.nn.ReLU": "relu", "torch.nn.ReLU6": "relu6", "torch.nn.Dropout": "dropout",
    "torch.nn.Identity": "clone", "torch.nn.Flatten": "flatten", "torch.nn.Tanh": "tanh",
    "torch.nn.Sigmoid": "sigmoid", "torch.nn.GELU": "gelu", "torch.nn.SiLU": "silu",
    "torch.nn.LayerNorm": "layer_norm", "torch.nn.GroupNorm": "group_norm",
    "torch.nn.Softmax": "softmax", "torch.nn.LogSoftmax": "log_softmax",
    "torch.nn.LeakyReLU": "leaky_relu", "torch.nn.Hardtanh": "hardtanh",
}


# torch.nn.Module's own private methods (`[n for n in dir(torch.nn.Module) if n.startswith("_")
# and not n.startswith("__")]`, torch 2.13.0): torch calls these itself, so a class's calls of
# them are not all their call sites (amplint.analysis.facts.dtype_params)
MODULE_PRIVATE_METHODS = frozenset({
    "_apply", "_call_impl", "_compiled_call_impl", "_get_backward_hooks",
    "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict",
    "_maybe_warn_non_full_backward_hook", "_named_members", "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict",
    "_slow_forward", "_version", "_wrapped_call_impl",
})


# composite Python functions whose decomposition runs a listed op, so their policy under a
# region is not their own name's: (device, op) -> policy, None when it depends on the inputs
# (`F.normalize` divides by a float32 `norm` under CUDA autocast)
DECOMPOSED_POLICY: Dict[tuple, Optional[str]] = {
    # CPU einsum runs bmm only when its equation sums an index two operands share
    # (`"ij,jk->ik"`: bfloat16; `"i,j->ij"`, `"ii->i"`: the input's dtype): see einsum_contracts.
    # CPU tensordot's full contraction (`tensordot(x, x)`, vectors) keeps the input's dtype,
    # others run mm: it depends
    ("cpu", "einsum"): "lower", ("cpu", "tensordot"): None,
    # F.normalize divides its input by a `norm`, float32 under CUDA autocast: float32 out
    ("cuda", "normalize"): "fp32",
    ("cuda", "tensordot"): None, ("cuda", "layer_norm"): "fp32", ("cuda", "group_norm"): "fp32",
}
# ops whose result is a tuple of tensors of the input's dtype
TUPLE_KEEP = _ops("chunk split unbind tensor_split")
# ops whose result is a tuple when given arguments (`x.max(1)` -> values, indices), one tensor
# of the input's dtype without (`x.max()`)
TUPLE_WITH_ARGS = _ops("max min median nanmedian")
# ops whose result is always a (values, indices) tuple (`x.sort()`, `x.mode()`, `x.aminmax()`:
# torch.return_types), never one tensor
TUPLE_ALWAYS = _ops("mode sort kthvalue topk cummax cummin aminmax")


def aten_op(qualified: str) -> Optional[str]:
    """The aten op a qualified torch function runs (`torch.nn.functional.softmax` ->
    "softmax"), or None for a name outside torch's functional namespaces."""
    op = FUNCTION_ALIASES.get(qualified)
    if op is not None:
        return op
    for prefix, aten in FUNCTION_PREFIXES.items():
        rest = qualified[len(prefix):]
        if qualified.startswith(prefix) and rest and "." not in rest:
            return aten + rest
    return None


def op_kind(op: str) -> Optional[str]:
    """The table an aten op's dtype rule is in, outside autocast; None when not known."""
    for kind, table in (("keep", KEEP), ("clamp", CLAMP), ("float", FLOAT_KEEP), ("reduce", REDUCE),
                        ("binary", BINARY), ("same", SAME), ("promote-all", PROMOTE_ALL),
                        ("bool", BOOL), ("pybool", PYTHON_BOOL), ("integer", INTEGER),
                        ("loss", LOSS)):
        if op in table:
            return kind
    return None


def einsum_contracts(equation: str) -> Optional[bool]:
    """Whether an einsum `equation` sums an index that two operands share (`"bij,bjk->bik"`,
    `"ij,ij->"`): CPU einsum then runs bmm (autocast's lower precision); False when no index is
    summed across operands (`"i,j->ij"`, `"ij,ij->ij"`, `"ii->i"`: elementwise, the input's dtype);
    None when an index is summed within one operand only (`"ij,k->k"`), or it cannot be read."""
    text = equation.replace(" ", "").replace("...", "")
    inputs, arrow, output = text.partition("->")
    operands = inputs.split(",")
    if not all(o.isalpha() or o == "" for o in operands) or not (output.isalpha() or output == ""):
        return None
    if not arrow:  # implicit output: the letters that appear once, sorted
        letters = "".join(operands)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    summed = {c for o in operands for c in o if c not in output}
    if not summed:
        return False
    shared = {c for c in summed if sum(c in o for o in operands) >= 2}
    if shared:
        return True
    return None
