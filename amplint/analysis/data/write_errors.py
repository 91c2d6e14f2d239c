"""What torch 2.13 raises when half values are written into a float32 tensor, per kind of
write (AMP101 quotes it). Each line was run on CPU (`torch.zeros(4, 3)` written with a bfloat16
source; `{half}` is `BFloat16`, or `Half` for float16):

    buf[idx] = h / buf[mask] = h / index_put_  RuntimeError: Index put requires the source and
                                                destination dtypes match, got Float for the
                                                destination and BFloat16 for the source.
    index_add_                                 RuntimeError: index_add_(): self (Float) and
                                                source (BFloat16) must have the same scalar type
    index_copy_                                RuntimeError: index_copy_(): self and source
                                                expected to have the same dtype, but got (self)
                                                Float and (source) BFloat16
    scatter_ / scatter_add_ / scatter_reduce_  RuntimeError: scatter(): Expected self.dtype to
                                                be equal to src.dtype
    masked_scatter_                            RuntimeError: masked_scatter: expected self and
                                                source to have same dtypes but gotFloat and
                                                BFloat16
    put_                                       RuntimeError: put_(): self and source expected to
                                                have the same dtype, but got self.dtype = Float
                                                and source.dtype = BFloat16
    torch.mm(h, h2, out=buf)                   RuntimeError: Expected out tensor to have dtype
                                                c10::BFloat16, but got float instead
"""

from __future__ import annotations

INDEX_PUT = "Index put requires the source and destination dtypes match"

# method -> the start of its error message (enough to recognise it; `{half}`: the dtype's name)
METHOD_ERRORS = {
    "index_put_": INDEX_PUT,
    "index_add_": "index_add_(): self (Float) and source ({half}) must have the same scalar type",
    "index_copy_": "index_copy_(): self and source expected to have the same dtype",
    "scatter_": "scatter(): Expected self.dtype to be equal to src.dtype",
    "scatter_add_": "scatter(): Expected self.dtype to be equal to src.dtype",
    "scatter_reduce_": "scatter(): Expected self.dtype to be equal to src.dtype",
    "masked_scatter_": "masked_scatter: expected self and source to have same dtypes",
    "put_": "put_(): self and source expected to have the same dtype",
}
OUT_ERROR = "Expected out tensor to have dtype c10::{half}, but got float instead"
# torch's names of the half dtypes in these messages
HALF_NAMES = {"bfloat16": "BFloat16", "float16": "Half"}
