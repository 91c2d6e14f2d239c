"""A context-manager opener that hands its `**kwargs` to every autocast it opens
(`torch_autocast(device_type="cuda", **kwargs)`): a call's `enabled=False` reaches the autocast,
so `with torch_autocast(enabled=False):` is a disabled region (found reading k2-fsa/icefall,
r16-realread: 9 AMP104 in the recipes' scaling.py, a backward inside an autograd Function's
backward run in float32).

tests/projects/ctxmgr_icefall_kwargs: icefall layout (icefall/utils.py `torch_autocast`, one
autocast per torch version, both given `**kwargs`; egs/librispeech/ASR/zipformer/scaling.py
`BalancerFunction.backward`). amplint/analysis/facts/context_functions.py `enabled_param` gives
the keyword `enabled` when the body only spreads `**kwargs` and no parameter is named `enabled`.
Twins: a call without `enabled=False`, and an opener that sets `kwargs["enabled"]` itself, are
reported; the same opener defined in the recipe's own file behaves the same.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "ctxmgr_icefall_kwargs"
SCALING = "egs/librispeech/ASR/zipformer/scaling.py"
DISABLED = "            with torch_autocast(enabled=False):\n"
ENABLED = "            with torch_autocast():\n"
IMPORT = "from icefall.utils import torch_autocast\n"
LOCAL = ("from contextlib import contextmanager\n\n\n@contextmanager\n"
         "def torch_autocast(device_type=\"cuda\", **kwargs):\n"
         "    with torch.amp.autocast(device_type=device_type, **kwargs):\n        yield\n")


def amp104(*edits):
    return code_findings(load(NAME, edits), "AMP104")[0]


def test_enabled_false_through_spread_kwargs_is_a_disabled_region():
    assert amp104() == []


def test_twin_the_call_without_enabled_false_is_reported():
    assert amp104((DISABLED, ENABLED)) == [(SCALING, 25, "AMP104")]


def test_twin_an_opener_that_sets_enabled_itself_is_reported():
    edit = ('    if TORCH_VERSION >= version.parse("2.3.0"):\n',
            '    kwargs["enabled"] = True\n    if TORCH_VERSION >= version.parse("2.3.0"):\n')
    assert amp104(edit) == [(SCALING, 25, "AMP104")]


def test_same_file_opener():
    assert amp104((IMPORT, LOCAL)) == []
    assert amp104((IMPORT, LOCAL), (DISABLED, ENABLED)) == [(SCALING, 31, "AMP104")]
