"""Two op-table gaps of blind set K (issue 26), as the general constructs, each in a multi-file
project shaped like a public repository other than the blind project, with a clean twin and
one-file variations that must stay silent where the value is not known.

- A module instance's call returns what its class's `forward` returns (`self.c_proj(h)` with
  `Conv1D.forward` running `torch.addmm`, float16 under CUDA autocast): blind K's
  stylegan3_mapping_embed_eps (its FullyConnectedLayer lives in another file and is picked by a
  class_name string, which this does not reach; the one-file reductions are closed).
- Python numbers keep a tensor's dtype: `bmm(q, k^T) * float(head_dim) ** -0.5`, `head_dim`
  unpacked from `x.size()` / `x.shape` (blind K's mask2former_query_pos_finfo, reductions
  mask2former_set_attention_verbatim; the full project passes `self.nhead`, an attribute set
  from a config, to `embed_dim // num_heads`: unknown, so it stays a miss).
Every dtype claim is run under torch 2.13 (CPU autocast bfloat16 / `.half()`)."""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def probe(text):
    return findings({"probe/probe.py": text})


# -- huggingface/transformers GPT-2: Conv1D (pytorch_utils.py) runs torch.addmm ---------------

GPT2 = "optable_gpt2_conv1d_eps"
GPT2_HAZARD = [("gpt2/modeling.py", 29, "AMP140")]
GPT2_FIX = [("clamp(min=1e-8)", "clamp(min=1e-4)")]


def test_gpt2_conv1d_forward_returns_addmm_under_the_callers_region():
    # train.py's float16 region calls GPT2ValueHead (gpt2/modeling.py); its `self.c_proj(h)`
    # returns Conv1D.forward's `torch.addmm(...)`: float16, so `clamp(min=1e-8)` clamps to 0
    files = load(GPT2)
    assert findings(files) == GPT2_HAZARD
    assert findings(load(GPT2, GPT2_FIX)) == []


CONV1D = '''
import torch
from torch import nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight){ret}


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_proj = Conv1D(1, 16){extra}

    def forward(self, h):
        return torch.sigmoid(self.c_proj(h)).clamp(min=1e-8).log()


head = Head().cuda()
with torch.autocast("cuda", dtype=torch.float16):
    out = head(torch.randn(4, 16, device="cuda"))
'''
NET_CALL = '''
import torch
from torch import nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight)


proj = Conv1D(1, 16).cuda()
with torch.autocast("cuda", dtype=torch.float16):
    out = {call}.clamp(min=1e-8).log()
'''


@pytest.mark.parametrize("ret,extra,expected", [
    ("", "", [("probe.py", 22, "AMP140")]),  # the construct, one file
    # the attribute is bound twice: which forward runs is not known
    ("", "\n        if True:\n            self.c_proj = nn.Identity()", []),
])
def test_module_attribute_call_variations(ret, extra, expected):
    assert probe(CONV1D.format(ret=ret, extra=extra)) == expected


def test_forward_with_two_returns_of_different_dtypes_stays_silent():
    text = CONV1D.format(ret="", extra="").replace(
        "        return torch.addmm(self.bias, x, self.weight)",
        "        if x.shape[0] > 1:\n            return torch.addmm(self.bias, x, self.weight)\n"
        "        return torch.addmm(self.bias, x, self.weight).float()")
    assert probe(text) == []


@pytest.mark.parametrize("call,expected", [
    ("torch.sigmoid(proj(torch.randn(4, 16, device=\"cuda\")))", [("probe.py", 18, "AMP140")]),
    ("torch.sigmoid(Conv1D(1, 16).cuda()(torch.randn(4, 16, device=\"cuda\")))", []),
])
def test_module_level_instance_call(call, expected):
    # `proj(x)`: a module-level instance bound once; `Conv1D(...).cuda()(x)` is not a plain
    # `Cls(...)(x)` call (moved first), its forward not bound
    assert probe(NET_CALL.format(call=call)) == expected


# -- Atten4Vis/ConditionalDETR: models/attention.py multi_head_attention_forward --------------

DETR = "optable_conditional_detr_scaling"
DETR_HAZARD = [("models/attention.py", 14, "AMP111")]
DETR_FIX = [("torch.finfo(query_pos.dtype).min", "torch.finfo(attn_output_weights.dtype).min")]


def test_conditional_detr_scaled_scores_keep_float16():
    # `torch.bmm(q, k^T) * float(head_dim) ** -0.5` is float16 under main.py's region, the
    # fill `finfo(query_pos.dtype).min` is float32's (query_pos: an nn.Embedding weight)
    files = load(DETR)
    assert findings(files) == DETR_HAZARD
    assert findings(load(DETR, DETR_FIX)) == []


ATTENTION = '''
import torch


def attention(query, key, query_pos, attn_mask, num_heads):
    q = query + query_pos
    {unpack}
    head_dim = embed_dim // num_heads
    scores = torch.bmm(q.transpose(0, 1), key.permute(1, 2, 0)) * {scale}
    scores = scores.masked_fill(attn_mask, torch.finfo(query_pos.dtype).min)
    return scores.softmax(-1)


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.query_embed = torch.nn.Embedding(100, 256)
        self.proj = torch.nn.Linear(256, 256)

    def forward(self, tgt, memory, attn_mask):
        query_pos = self.query_embed.weight.unsqueeze(1).repeat(1, tgt.shape[1], 1)
        return attention(self.proj(tgt), self.proj(memory), query_pos, attn_mask, {heads})


model = Decoder().cuda()
with torch.autocast("cuda", dtype=torch.float16):
    out = model(torch.randn(100, 2, 256, device="cuda"), torch.randn(50, 2, 256, device="cuda"),
                torch.zeros(2, 100, 50, dtype=torch.bool, device="cuda"))
'''
HIT = [("probe.py", 10, "AMP111")]


@pytest.mark.parametrize("unpack,scale,heads,expected", [
    ("tgt_len, bsz, embed_dim = q.shape", "head_dim ** -0.5", "8", HIT),  # `.shape` of an unknown
    ("tgt_len, bsz, embed_dim = query.size()", "head_dim ** -0.5", "8", HIT),
    ("embed_dim = query.shape[-1]", "(1.0 / float(head_dim))", "8", HIT),
    ("tgt_len, bsz, embed_dim = q.shape", "float(head_dim) ** -0.5", "self.nhead", HIT),
    # `embed_dim // self.nhead`: the attribute may hold anything (a tensor): the scale unknown
    ("tgt_len, bsz, embed_dim = q.shape", "head_dim ** -0.5", "self.nhead", []),
])
def test_python_number_scale_variations(unpack, scale, heads, expected):
    assert probe(ATTENTION.format(unpack=unpack, scale=scale, heads=heads)) == expected


def test_shadowed_float_is_not_the_builtin():
    text = ATTENTION.format(unpack="tgt_len, bsz, embed_dim = q.shape", scale="float(head_dim) ** -0.5",
                            heads="self.nhead").replace("import torch\n", "import torch\nfrom .num import float\n", 1)
    assert probe(text) == []


# -- the dtype claims, run -----------------------------------------------------------------------

def test_claims_run_under_torch():
    torch = pytest.importorskip("torch")
    q = torch.randn(16, 8, 4).half()
    head_dim = q.shape[-1]
    assert (torch.bmm(q, q.transpose(1, 2)) * float(head_dim) ** -0.5).dtype == torch.float16
    assert (torch.bmm(q, q.transpose(1, 2)) * head_dim ** -0.5).dtype == torch.float16
    # a one-element int tensor as `num_heads` makes the scale a 1-dim float32 tensor: promotes
    scale = (torch.tensor([32]) // torch.tensor([8])) ** -0.5
    assert (torch.bmm(q, q.transpose(1, 2)) * scale).dtype == torch.float32
    x, w, b = torch.randn(4, 16), torch.randn(16, 1), torch.zeros(1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.addmm(b, x, w).dtype == torch.bfloat16
        scores = torch.bmm(torch.randn(2, 4, 8), torch.randn(2, 8, 4)) * float(8) ** -0.5
        assert scores.dtype == torch.bfloat16
        with pytest.raises(RuntimeError, match="overflow"):
            scores.masked_fill(torch.ones(2, 4, 4, dtype=torch.bool), torch.finfo(torch.float32).min)
        scores.masked_fill(torch.ones(2, 4, 4, dtype=torch.bool), torch.finfo(scores.dtype).min)
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
    assert torch.tensor(1e-4, dtype=torch.float16).item() > 0.0
