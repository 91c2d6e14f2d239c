"""AMP101 names the half value the new float32 tensor meets, and where (issue 28)."""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source

SETTINGS = Settings(frozenset({"AMP101"}))


def messages(source: str):
    result = lint_source("example.py", source, SETTINGS)
    assert not result.errors
    return [(d.line, d.message) for d in result.diagnostics]


HALF_MODULE = (
    "import torch\n"
    "class Block(torch.nn.Module):\n"
    "    def forward(self, x, n):\n"
    "{body}"
    "block = Block().half()\n"
)


# a module class of the file whose output the dtype fact leaves unknown (`self.proj` is not
# valued): the finding cites the module's output
ENCODER = (
    "import torch\n"
    "class Encoder(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return self.proj(x)\n"
)


def test_region_write_names_the_value_and_its_origin():
    found = messages(ENCODER + (
        "def step(x, idx, n):\n"
        "    model = Encoder()\n"
        "    with torch.autocast('cuda'):\n"
        "        h = model(x)\n"
        "        out = torch.zeros(n, h.shape[-1], device=h.device)\n"
        "        out[idx] = h\n"
    ))
    assert len(found) == 1 and found[0][0] == 9
    assert "line 10 writes `h` (half: the output of `model` at line 8) into it" in found[0][1]


def test_region_concatenation_names_the_half_item():
    found = messages(ENCODER + (
        "def step(x, n):\n"
        "    encoder = Encoder()\n"
        "    with torch.autocast('cuda'):\n"
        "        h = encoder(x)\n"
        "        pad = torch.zeros(n, h.shape[-1], device=h.device)\n"
        "        return torch.cat([pad, h])\n"
    ))
    assert len(found) == 1
    assert "line 10 concatenates it with `h` (half: the output of `encoder` at line 8)" in found[0][1]


def test_fp16_code_prefers_the_value_shown_half():
    # `x` (unknown dtype) is met first, `h` (a submodule's output) later: `h` is named
    found = messages(HALF_MODULE.format(body=(
        "        h = self.proj(x)\n"
        "        mask = torch.ones(n, device=x.device)\n"
        "        y = x * mask\n"
        "        return h * mask[:, None], y\n"
    )))
    assert len(found) == 1 and found[0][0] == 5
    assert "line 7 mixes it with `h` (half: the output of `self.proj` at line 4)" in found[0][1]


def test_fp16_code_skips_numbers_and_float32_values():
    found = messages(HALF_MODULE.format(body=(
        "        mask = torch.ones(n, device=x.device)\n"
        "        scaled = mask * 2.0 + torch.zeros(n, dtype=torch.float32)\n"
        "        return x + mask, scaled\n"
    )))
    assert len(found) == 1
    assert "line 6 mixes it with `x`:" in found[0][1]
    assert "(half:" not in found[0][1]  # `x`'s dtype is not known: no reason claimed


def test_fp16_code_inline_factory():
    found = messages(HALF_MODULE.format(body=(
        "        h = self.proj(x)\n"
        "        return h + torch.randn(h.shape, device=h.device)\n"
    )))
    assert len(found) == 1
    assert "line 5 mixes it with `h` (half: the output of `self.proj` at line 4)" in found[0][1]


def test_fp16_code_without_a_meeting_keeps_the_general_message():
    found = messages(HALF_MODULE.format(body="        return torch.zeros(n, device=x.device)\n"))
    assert len(found) == 1
    assert "silently upcasts the half tensors it meets" in found[0][1]
    assert "line " not in found[0][1].split("made half at line")[1]


def test_braces_in_the_named_value_survive_formatting():
    found = messages(HALF_MODULE.format(body=(
        "        mask = torch.ones(n, device=x.device)\n"
        "        return {'a': x}['a'] * mask\n"
    )))
    assert len(found) == 1 and "mixes it with `{'a': x}['a']`" in found[0][1]


def test_met_only_by_float32_values_is_clean():
    # fairseq's key_padding_mask filler: the cat is float32 whatever the filler is
    assert messages(HALF_MODULE.format(body=(
        "        filler = torch.zeros(n, 4, device=x.device)\n"
        "        mask = torch.cat([x.float(), filler], dim=1)\n"
        "        filler += torch.ones(n, 4, dtype=torch.float32)\n"
        "        return mask\n"
    ))) == []


def test_met_by_float32_and_half_is_reported():
    found = messages(HALF_MODULE.format(body=(
        "        filler = torch.zeros(n, 4, device=x.device)\n"
        "        mask = torch.cat([x.float(), filler], dim=1)\n"
        "        return self.proj(x) + filler\n"
    )))
    assert len(found) == 1 and "line 6 mixes it with `self.proj(x)` (half: the output of `self.proj`)" in found[0][1]


# lucidrains/muse-maskgit-pytorch's MaskGit.generate on a half model: the float32 scores pick
# the tokens to mask (indices only) and are rebound by a dtype-keeping masked_fill
MASKGIT_SCORES = (
    "        ids = torch.full((n, 8), 3, dtype=torch.long, device=x.device)\n"
    "        scores = torch.zeros((n, 8), device=x.device)\n"
    "        for step in range(4):\n"
    "            masked = scores.topk(2, dim=-1).indices\n"
    "            ids = ids.scatter(1, masked, 3)\n"
    "            logits = self.transformer(ids)\n"
    "            is_mask = ids == 3\n"
    "            scores = scores.masked_fill(~is_mask, -1e5)\n"
    "            if scores.shape[0] > n or scores.argmax() < 0:\n"
    "                break\n"
    "{tail}"
    "        return ids\n"
)


def test_a_local_read_only_for_its_indices_meets_no_half_data():
    assert messages(HALF_MODULE.format(body=MASKGIT_SCORES.format(tail=""))) == []


def test_a_local_whose_sorted_values_are_read_still_meets_data():
    # `.values` of a topk is float32 data that the half logits meet: still reported
    found = messages(HALF_MODULE.format(body=MASKGIT_SCORES.format(
        tail="        ids = ids + logits * scores.topk(2, dim=-1).values.sum()\n")))
    assert len(found) == 1 and found[0][0] == 5


def test_a_local_returned_after_its_index_reads_is_still_reported():
    found = messages(HALF_MODULE.format(body=MASKGIT_SCORES.format(tail="        return scores\n")))
    assert len(found) == 1 and found[0][0] == 5


def test_the_maskgit_scores_never_meet_half_data_under_torch():
    """The claim, run: in a half model the float32 scores only give indices and stay float32;
    the half logits are never upcast."""
    import pytest
    torch = pytest.importorskip("torch")
    scores = torch.zeros((2, 8))
    logits = torch.randn(2, 8).half()
    masked = scores.topk(2, dim=-1).indices
    assert masked.dtype == torch.int64
    scores = scores.masked_fill(~(logits > 0), -1e5)
    assert scores.dtype == torch.float32 and logits.dtype == torch.float16
    assert (scores.argmax() < 0).dtype == torch.bool


# NVIDIA/Megatron-LM tests/unit_tests/transformer/experimental_attention_variant
# dsa_native_parity_utils.py: a -inf mask scattered at the indexer's top-k positions
SPARSE_MASK = (
    "import torch\n"
    "class Indexer(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.wq = torch.nn.Linear(8, 8)\n"
    "    def forward(self, x):\n"
    "        logits = torch.einsum('bsd,btd->bst', self.wq(x), x)\n"
    "        topk_logits, topk_indices = logits.topk(2, dim=-1)\n"
    "        return topk_indices, topk_logits.log_softmax(-1)\n"
    "class NativeDSA(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.q = torch.nn.Linear(8, 8)\n"
    "        self.indexer = Indexer()\n"
    "        self.scale = 8 ** -0.5\n"
    "    def forward(self, x, mask):\n"
    "        bsz, seqlen, _ = x.shape\n"
    "        scores = torch.einsum('bsd,btd->bst', self.q(x), x) * self.scale\n"
    "        scores = scores + mask.unsqueeze(1)\n"
    "        topk_indices, log_prob = self.indexer(x)\n"
    "        index_mask = torch.full((bsz, seqlen, seqlen), float('-inf'), device=x.device)\n"
    "        index_mask.scatter_(-1, {args})\n"
    "        scores = scores + index_mask\n"
    "        return scores.softmax(-1), log_prob\n"
    "dsa = NativeDSA().cuda().bfloat16()\n"
)


def test_scatter_index_is_not_a_value_written():
    (found,) = messages(SPARSE_MASK.format(args="topk_indices, 0"))
    assert found[0] == 21
    assert "writes `topk_indices`" not in found[1]
    assert "line 23 mixes it with `scores`" in found[1]


def test_twin_scatter_source_is_the_value_written():
    (found,) = messages(SPARSE_MASK.format(args="topk_indices, log_prob"))
    assert "line 22 writes `log_prob` into it" in found[1]

