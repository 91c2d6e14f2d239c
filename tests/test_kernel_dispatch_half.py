"""AMP151 on a Function whose compiled kernel, in the project's own CUDA source, dispatches on
half as well as float (a known false positive, found reading microsoft/Swin-Transformer).

tests/projects/fn_swin_window_process: microsoft/Swin-Transformer layout (main.py runs the model
under `torch.cuda.amp.autocast`; models/shifted_windows.py applies the fused shift-and-partition
Functions of kernels/window_process/window_process.py, which bind `swin_window_process` built by
kernels/window_process/setup.py from window_process_kernel.cu). Each Function moves elements of
one floating tensor; backward reads only the incoming gradient (no saved tensors), and the kernel
is compiled for float and half (`AT_DISPATCH_FLOATING_TYPES_AND_HALF`): under float16 autocast
nothing mismatches and `custom_fwd`/`custom_bwd` would change nothing. The hazardous twin compiles
the same kernel for float/double only (`AT_DISPATCH_FLOATING_TYPES`): the half windows coming out
of the attention raise "not implemented for 'Half'", and AMP151 must keep reporting it.

Was (amplint/analysis/facts/custom_functions.py, `_Sensitive.visit_Call`): any call into a
compiled extension made a Function dtype-sensitive; facts/kernel_sources now reads the kernel's
setup.py and sources, and custom_functions._saves_tensors what backward is given.
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

PROJECT = "fn_swin_window_process"
KERNEL = f"{PROJECT}/kernels/window_process/window_process_kernel.cu"
APPLIES = [("models/shifted_windows.py", 36, "AMP151"), ("models/shifted_windows.py", 41, "AMP151")]


def test_a_kernel_compiled_for_half_with_a_gradient_only_backward_is_silent():
    float_only = load(PROJECT, [("AT_DISPATCH_FLOATING_TYPES_AND_HALF", "AT_DISPATCH_FLOATING_TYPES")])
    assert "_AND_HALF" not in float_only[KERNEL]
    assert code_findings(float_only, "AMP151")[0] == APPLIES

    # the half kernel, but backward is given a tensor of forward's: still reported
    kept = load(PROJECT, [("ctx.shape = (b, h, w, c, shift, window)",
                           "ctx.shape, ctx.x = (b, h, w, c, shift, window), x")])
    assert code_findings(kept, "AMP151")[0] == APPLIES
    # the half kernel, but one of its functions takes two tensors (a float32 one may meet a half)
    two = load(PROJECT, [("at::Tensor x, int64_t stride)", "at::Tensor x, at::Tensor bias, int64_t stride)")])
    assert code_findings(two, "AMP151")[0] == APPLIES

    assert code_findings(load(PROJECT), "AMP151")[0] == []
