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
ENTRY_KINDS: Tuple[str, ...] = ("EntryRegion", "EntryHalf", "EntryHalfBase")
# the kinds that only add fp16 code (Fp16Analysis' functions / float16_functions / note): an
# EntryHalfBase names a base whose listed methods a half class inherits; taking the whole class
# as half, as the prefilter does, reads a superset of them
HALF_KINDS: Tuple[str, ...] = ("EntryHalf", "EntryHalfBase")

# Rules whose result such entries do not change: they read no region or half class, or read
# them only at a hazard their own trigger words already name (AMP120's Lightning clip:
# `clip_gradients`; AMP124: a GradScaler of the file, its explicit regions; AMP130: a deprecated
# reference's enclosing region). They are prefiltered as in a file without entries.
ENTRY_BLIND: Tuple[str, ...] = (
    "AMP120", "AMP121", "AMP122", "AMP123", "AMP124", "AMP125", "AMP126", "AMP127",
    "AMP130", "AMP131", "AMP132", "AMP133",
)

# Rules whose result a file's EntryHalf entries do not change (issue 34): they read no half
# class (Fp16Analysis' half_classes / why / functions / float16_functions, `note`, `is_fp16`,
# half_values, float32_evidence, _property_fill) and no other fact an EntryHalf changes
# (RegionAnalysis seeds only EntryRegion; the scalers, callgraph, defuse, custom Functions and
# no_grad methods read no EntryHalf; param_defaults, which reads every entry's target, serves
# none of them). AMP103 and AMP152 read only the file's own casts (`half_casts`,
# `method_cast_calls`, `model_casts`: made from the file's code alone). In a file whose entries
# are all EntryHalf they are prefiltered as in a file without entries.
HALF_BLIND: Tuple[str, ...] = ("AMP102", "AMP103", "AMP104", "AMP150", "AMP151", "AMP152", "AMP153")

# Rules whose result with EntryHalf-only entries differs from their result without entries only
# in the fp16 code: AMP110 reads half classes only through `fp16.is_fp16` (then `half_casts` and
# `note`) at the fill's frame; its dtype (facts.fills, facts.dtypes: regions, the file's code,
# `fp16.float32_params` from decorators) and constants read no EntryHalf, and param_defaults,
# which drops the defaults of a function whose scope key is an entry's target, cannot meet one
# where no function is named like a target (checked). Where the file has no region and no half
# cast of its own (the "reached" conditions), such a rule needs its trigger words (the prefilter
# without entries) or its ENTRY_NEEDS in the half classes' bodies.
HALF_OR_BLIND: Tuple[str, ...] = ("AMP110",)

# What ENTRY_NEEDS asks of a file's code (amplint.analysis.prefilter_entries reads it with Python's
# `ast`, a tenth of LibCST's cost): identifiers, each a name, an attribute or a part of an imported
# name in code (not in strings or comments; a name bound by `import ... as` counts as the name it
# imports), or one of these marks:
TINY_FLOAT = "<float literal in (0, 6e-8)>"  # AMP140's THRESHOLD
CONSTANT_STORE = "<index store of a constant>"  # `x[m] = 1e9`, `x[m]: T = -INF` (facts/fills.py)
HALF_CONVERTER_NAME = "<a converter's name>"  # HALF_CONVERTER below: `convert_module_to_f16`
REGION_TEXT = "<a region word>"  # REGION_WORDS anywhere in the text
# `buf = torch.zeros(...)` and, in the same function, `buf[idx] = ...`, `buf.index_put_(...)`
# (BUFFER_WRITERS), `out=buf` or a cat/stack (CONCAT_NAMES) of a list or tuple holding `buf`
# (facts/buffer_writes.hazardous_write, of the name `_assigned_name` gives, or `self.cache`
# stored once: held_buffer)
FACTORY_WRITE = "<a factory's buffer written>"
FACTORY_NAMES: Tuple[str, ...] = ("zeros", "ones", "empty", "full", "tensor", "rand", "randn")
BUFFER_WRITERS: Tuple[str, ...] = ("index_put_", "index_copy_", "index_add_", "scatter_",
                                   "scatter_add_", "scatter_reduce_", "masked_scatter_", "put_")
CONCAT_NAMES: Tuple[str, ...] = ("cat", "concat", "concatenate", "stack", "hstack", "vstack")
CONSTANT_FILL = "<fill with a constant>"  # a call of FILL_NAMES with an argument as CONSTANT_STORE's
SQUARE = "<square>"  # `x ** 2`, `x * x` (rules/_reduction_shapes._square_base)

# the fills AMP110 reads (data/overflow.FUNCTIONS' last parts and METHODS)
FILL_NAMES: Tuple[str, ...] = ("masked_fill", "masked_fill_", "fill_", "index_fill",
                               "index_fill_", "full", "full_like", "new_full")

# The names of a half cast (facts.fp16.half_cast_dtype): `.half()`, `.bfloat16()`, a dtype
# `torch.float16` / `torch.half` / `torch.bfloat16`, a type `torch.cuda.HalfTensor` /
# `BFloat16Tensor`
HALF_CAST_NAMES: Tuple[str, ...] = ("half", "bfloat16", "float16", "HalfTensor", "BFloat16Tensor")

# The scopes of a requirement: "file", the whole file's code; "reached", the functions an
# EntryRegion can reach (its targets, then every function of the file named by a call in a
# reached one, and every `forward`, `__call__` and `__init__` once a reached function calls
# anything: a superset of facts.callgraph's callees), where the rule can fire only at a site
# under an active region. "reached" is read only in a file whose entries are all EntryRegion
# and whose code opens no region of its own and names no half cast (no REGION_WORDS in its text,
# none of HALF_CAST_NAMES, no converter): elsewhere, the whole file. In a file whose entries
# are all EntryHalf, with the same conditions, no region exists and the fp16 code is the
# methods of the half classes and of the submodule classes they build (Fp16Analysis'
# `functions` / `float16_functions`): "reached" is then the bodies of those classes
# (prefilter_entries.CodeNames.half_reached), and ENTRY_NEEDS_BESIDE (the region paths') is
# not asked.
FILE, REACHED = "file", "reached"

# rule code -> (scope, what one of which the code must hold for the rule to fire in a file whose
# entries are all of ENTRY_KINDS): the hazard the rule flags, the region or half class possibly
# coming from the entries. Written from each rule's code: the last part of a qualified name is
# always in the code (the call or its import names it). A rule in neither table is parsed.
ENTRY_NEEDS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    # a call of torch.zeros/ones/empty/full/tensor/rand/randn (FACTORIES) under a region (or in
    # fp16 code: a half cast or an EntryHalf, which the scope rules out)
    "AMP101": (REACHED, FACTORY_NAMES),
    # F.binary_cross_entropy / torch.binary_cross_entropy, nn.BCELoss (called or bound: the
    # instance may be made in `__init__`, outside the reached code)
    "AMP102": (FILE, ("binary_cross_entropy", "BCELoss")),
    # a half cast of the file (fp16.half_casts); another file's (EntryCallsParam) is no kind above
    "AMP103": (FILE, HALF_CAST_NAMES),
    # `.backward()` / `.manual_backward()`, torch.autograd.backward/grad, a framework verb that
    # runs backward (scaler_vocab: `optim_wrapper.update_params`), under a region
    "AMP104": (REACHED, ("backward", "manual_backward", "grad", "update_params")),
    # an active explicit region of the file (`with`): entry regions are inherited, not explicit
    "AMP105": (FILE, (REGION_TEXT,)),
    # a fill (overflow.FUNCTIONS / METHODS) or an index store, of a constant (it may be
    # arithmetic, `2 ** 16`, or a name bound to one); the tensor's dtype may be known elsewhere
    "AMP110": (FILE, (CONSTANT_FILL, CONSTANT_STORE)),
    # `torch.finfo(...).min/max`, written in the fill or in the local it reads
    "AMP111": (FILE, ("finfo",)),
    # an eps literal under 6e-8 (in the expression, a local or `self.eps` set in `__init__`);
    # or a torch.optim optimizer of a half model (its default eps)
    "AMP140": (FILE, (TINY_FLOAT, "optim")),
    # a reduction (sum / mean of squares or exp, var, std, cumsum, prod; a softmax's `.sum`) of
    # a value under a region (or of float16 code: a half cast or an EntryHalf, ruled out)
    "AMP141": (REACHED, ("sum", "mean", "var", "std", "cumsum", "prod")),
    # a grad-free pass: no_grad / inference_mode / set_grad_enabled; another file's no_grad
    # methods (EntryNoGrad*) are no kind above. Its pairs sit in one region body: a function
    # the region reaches, its grad-free calls in a `with` / decorator there or in a callee of
    # the file (`nograd_params`, `nograd_forward`: reached too, decorators included)
    "AMP150": (REACHED, ("no_grad", "inference_mode", "set_grad_enabled")),
    # `Fn.apply(...)` or an alias bound to `Fn.apply` (`fn`, `self.fn`: the prefilter reads the
    # alias as naming `apply`), called where a region is active: in a reached function; another
    # file's (EntryFunction) is no kind above
    "AMP151": (REACHED, ("apply",)),
    # a float16 cast of a model in the file (fp16.model_casts: a half cast, or a method of the
    # file casting submodules, by such a cast or by `.apply` of a converter, fp16._converter_dtype)
    "AMP152": (FILE, HALF_CAST_NAMES + (HALF_CONVERTER_NAME,)),
    # an nn.DataParallel of the file; another file's (EntryModule / EntryWrappedCall) is no kind above
    "AMP153": (FILE, ("DataParallel",)),
}

# rule code -> what the same reached function must also hold, where the "reached" scope is read:
# AMP101 under a region reports a factory only with a hazardous write in its function
# (facts/buffer_writes.hazardous_write: FACTORY_WRITE)
ENTRY_NEEDS_BESIDE: Dict[str, Tuple[str, ...]] = {
    "AMP101": (FACTORY_WRITE,),
    # AMP141 under a region (its `_autocast_values`: the float16-code reductions need a half
    # cast or an EntryHalf) flags a sum / mean of a square, a sum of `exp`, a softmax by hand
    "AMP141": (SQUARE, "square", "pow", "exp"),
}
