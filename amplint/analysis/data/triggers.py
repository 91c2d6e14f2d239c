"""The prefilter's second table: text a rule needs besides one of its own trigger words
(`Rule.triggers`) before it can fire in a file the project pass gave no entries.

A file with entries (regions other files or framework settings put around its functions) is
analysed whatever its text holds, so a requirement here may name what only the file itself can
supply. Every requirement must be exact: a file without it gives no finding of that rule
(tests/test_prefilter.py checks the rules' own examples against it).
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
