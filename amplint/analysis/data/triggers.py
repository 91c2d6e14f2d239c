"""The prefilter's second table: text a rule needs besides one of its own trigger words
(`Rule.triggers`) before it can fire in a file the project pass gave no entries.

A file with entries (regions other files or framework settings put around its functions) is
tested with the third table (ENTRY_NEEDS): what each rule needs in the file's own text when the
region comes from elsewhere. Every requirement must be exact: a file without it gives no finding
of that rule (tests/test_prefilter.py checks the rules' own examples and tables against it).
"""

from __future__ import annotations

from typing import Dict, Tuple

# An active autocast region of the file itself needs one of these words: the autocast APIs and
# their aliases (`torch.autocast`, `amp.autocast`, `partial(autocast, ...)`), the framework
# context managers (`accelerator.autocast()`, `optim_wrapper.optim_context(model)`) and mmcv's
# `@auto_fp16` (amplint.analysis.facts.regions builds regions from nothing else; functions it calls
# inherit only from such a region).
REGION_WORDS: Tuple[str, ...] = ("autocast", "optim_context", "auto_fp16")

# rule code -> words one of which must also appear
ALSO_NEEDS: Dict[str, Tuple[str, ...]] = {
    # a finfo fill overflows only a tensor made under an active region (the rule returns early
    # when no frame has one)
    "AMP111": REGION_WORDS,
    # a DataParallel replica is wrong only when called under an active bfloat16 region
    "AMP153": REGION_WORDS,
}

# Trigger words that are also the names of half dtypes and casts: in a file whose other words
# match no rule, they count only where code names a half dtype or cast outside a comparison.
# Every half value the analysis knows comes from such a name (amplint.analysis.facts.fp16): `x.half()`,
# `x.bfloat16()`, `.to(torch.float16)`, `dtype=torch.half`, `from torch import float16 as F16`,
# `.apply(convert_module_to_f16)`; a comparison (`x.dtype == torch.float16`), a string, a
# comment or a variable such as `load_bfloat16` makes none.
HALF_WORDS: Tuple[str, ...] = ("float16", "f16", ".half(", "torch.half")
# a name or attribute spelled so, or an import of one
HALF_NAMES: Tuple[str, ...] = ("float16", "half", "bfloat16")
# a function handed to `.apply` that casts modules (facts/fp16.py's `_converter_dtype`)
HALF_CONVERTER = r"(^|_)(to|convert\w*)_(f16|fp16|half|float16|bf16|bfloat16)$"


# -- files with entries (issue 34) ------------------------------------------------------------
# The entry kinds (class names, amplint.analysis.facts.regions) the requirements below hold with:
# a region put around a function of the file (EntryRegion, it seeds `Frame.inherited`) and a
# class of the file another file makes half (EntryHalf, Fp16Analysis's half classes). A file
# with an entry of any other kind (a region opened by a parameter or a context-manager function
# of another file, scaler protocol events, custom Functions, no_grad methods, DataParallel
# classes, ...) is parsed whatever its text holds.
ENTRY_KINDS: Tuple[str, ...] = ("EntryRegion", "EntryHalf")

# Rules whose result such entries do not change: they read no region or half class, or read
# them only at a hazard their own trigger words already name (AMP120's Lightning clip:
# `clip_gradients`; AMP124: a GradScaler of the file, its explicit regions; AMP130: a deprecated
# reference's enclosing region). They are prefiltered as in a file without entries.
ENTRY_BLIND: Tuple[str, ...] = (
    "AMP120", "AMP121", "AMP122", "AMP123", "AMP124", "AMP125", "AMP126", "AMP127",
    "AMP130", "AMP131", "AMP132", "AMP133",
)

# The text a half cast of the file names (facts.fp16.half_cast_dtype): `.half()`, `.bfloat16()`,
# a dtype `torch.float16` / `torch.half` / `torch.bfloat16`, a type `torch.cuda.HalfTensor` /
# `BFloat16Tensor` (through an import alias the import names it); or a method of the file that
# casts submodules, with such a cast or `.apply` of a converter (`convert_module_to_f16`,
# `to_fp16`, `to_bf16`: fp16._converter_dtype)
_HALF_CAST = r"half|Half|float16|Float16|f16|fp16"

# rule code -> a regular expression the file's own text matches whenever the rule can fire in a
# file whose entries are all of ENTRY_KINDS (the hazard the rule flags; the region or half class
# may come from the entries). Written from each rule's code: a qualified name's last part is
# always in the text (the call or its import names it). A rule in neither table is parsed.
ENTRY_NEEDS: Dict[str, str] = {
    # a call of torch.zeros/ones/empty/full/tensor/rand/randn (FACTORIES)
    "AMP101": r"zeros|ones|empty|full|tensor|rand",
    # F.binary_cross_entropy / torch.binary_cross_entropy, nn.BCELoss (called or bound)
    "AMP102": r"binary_cross_entropy|BCELoss",
    # a half cast of the file (fp16.half_casts); another file's (EntryCallsParam) is not a kind above
    "AMP103": _HALF_CAST,
    # `.backward()` / `manual_backward`, torch.autograd.backward/grad, a framework verb that
    # runs backward (scaler_vocab: `optim_wrapper.update_params`)
    "AMP104": r"backward|\bgrad\b|update_params",
    # an active explicit region of the file (`with`): entry regions are inherited, not explicit
    "AMP105": "|".join(REGION_WORDS),
    # a fill (overflow.FUNCTIONS / METHODS: masked_fill, fill_, index_fill, full, new_full) or
    # an index assignment `x[...] = <constant>` / `x[...]: T = ...` (the constant may be
    # arithmetic, `2 ** 16`: not bounded by its text)
    "AMP110": r"fill|full|\](?:[\s)\\]|#[^\n]*)*[=:]",
    # `torch.finfo(...).min/max`, written in the fill or in the local it reads
    "AMP111": "finfo",
    # an eps literal under 6e-8 (`1e-8`, `0.00000001`, `0.000_000_01`), in the expression, a
    # local or `self.eps`; or a torch.optim optimizer of a half model (its default eps)
    "AMP140": r"[eE]-|\.[0_]{7}|optim",
    # a reduction: sum / mean (squares, exp), var, std, cumsum, prod, a softmax's `.sum`
    "AMP141": r"sum|mean|var|std|prod",
    # a grad-free pass: no_grad / inference_mode / set_grad_enabled (False); another file's
    # no_grad methods (EntryNoGrad*) are not a kind above
    "AMP150": r"no_grad|inference_mode|set_grad_enabled",
    # `Fn.apply(...)` or an alias bound to `Fn.apply`; another file's (EntryFunction) is not a kind above
    "AMP151": "apply",
    # a float16 cast of a model in the file (fp16.model_casts)
    "AMP152": _HALF_CAST,
    # an nn.DataParallel of the file; another file's (EntryModule / EntryWrappedCall) is not a kind above
    "AMP153": "DataParallel",
}
