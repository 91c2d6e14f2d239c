"""Float16 tensors kept in a local dict: an item read out of it is float16 (AMP141).

tests/projects/dict_picogpt_half: jaymody/picoGPT layout (gpt2.py: the GPT-2 forward written
as functions over a dict of weights, `generate` and `main`; utils.py:
`load_encoder_hparams_and_params`), ported to torch in a fork whose `generate` converts the
loaded weights to float16 in a dict comprehension (`{name: tensor.half() for ...}`) and samples
from a softmax written by hand, `logits.exp() / logits.exp().sum()`, with no max subtracted:
float16's exp overflows past 11.09 and the probabilities are NaN (run below on CPU). On main a
dict's items had no dtype. Clean twin: float32 weights (`tensor.float()`).
"""

from __future__ import annotations

import pytest

from project_files import code_findings, load

NAME = "dict_picogpt_half"
GPT2 = f"{NAME}/gpt2.py"
CONVERT = "params = {name: tensor.half() for name, tensor in state.items()}"
FINDING = [("gpt2.py", 26, "AMP141")]


def _amp141(replace=()):
    return code_findings(load(NAME, replace), "AMP141")[0]


def test_items_of_a_dict_of_half_weights_are_half():
    assert CONVERT in load(NAME)[GPT2]
    assert _amp141() == FINDING


def test_a_list_display_of_half_values_too():
    listed = ("params = {name: tensor.half() for name, tensor in state.items()}\n"
              "    heads = [params[\"wte\"], params[\"wpe\"]]")
    read = ("logits = x[-1] @ params[\"wte\"].T / temperature", "logits = x[-1] @ heads[0].T / temperature")
    assert _amp141(((CONVERT, listed), read)) == [("gpt2.py", 27, "AMP141")]


def test_clean_twin_keeps_float32_weights():
    assert _amp141(((CONVERT, CONVERT.replace("tensor.half()", "tensor.float()")),)) == []


@pytest.mark.parametrize("after", [
    'params["wte"] = state["wte"].float()',  # a store of another dtype
    'params.update(extra)',  # a method that may add items of any dtype
    'tie_weights(params)',  # handed to a call that may change it
    'params = {name: tensor for name, tensor in state.items()}',  # rebound: not half
])
def test_items_not_known_exactly_are_not_read(after):
    assert _amp141(((CONVERT, CONVERT + "\n    " + after),)) == []


def test_items_of_several_dtypes_are_not_read():
    mixed = 'params = {"wte": state["wte"].half(), "wpe": state["wpe"].float()}'
    assert _amp141(((CONVERT, mixed),)) == []


def test_premise_float16_softmax_by_hand_is_nan():
    torch = pytest.importorskip("torch")
    logits = torch.tensor([12.0, 1.0, -3.0], dtype=torch.float16)
    probs = logits.exp() / logits.exp().sum()
    assert torch.isnan(probs).any()
    fixed = torch.softmax(logits, dim=-1, dtype=torch.float32)
    assert torch.isfinite(fixed).all()
