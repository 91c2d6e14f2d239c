"""Modules reached through the elements a forward's loop takes out of a container (issue 26).

- a loop whose target takes each item apart: lucidrains/vit-pytorch's
  `for attn, ff in self.layers` over `nn.ModuleList([Attention(...), FeedForward(...)])` items
  (tests/projects/loop_vit_layers), and lucidrains/x-transformers'
  `for layer_type, (norm, block) in zip(self.layer_types, self.layers)`
  (tests/projects/loop_xtransformers_zip). Element i of an item is item i of a tuple the container
  holds, nothing else.
- an attribute read of an `nn.ModuleDict`'s literal key: karpathy/nanoGPT's
  `self.transformer = nn.ModuleDict(dict(..., h=nn.ModuleList([Block(config) ...])))` iterated as
  `for block in self.transformer.h` (tests/projects/moduledict_nanogpt).

Each hazard is a `masked_fill(..., -1e9)` on the float16 scores of an attention the region runs
(AMP110); each project has a clean twin. The ViT hazard is also run on CPU under a float16
autocast: the unpacked `attn` really runs and raises, and the twin runs.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load  # noqa: E402

SETTINGS = Settings.default()
ON = SimpleNamespace(value_flow=True)

VIT = [("loop_vit_layers/vit_pytorch/attention.py", 20, "AMP110")]
VIT_FIX = [("dots.masked_fill(~mask[:, None, None, :], -1e9)",
            "dots.masked_fill(~mask[:, None, None, :], torch.finfo(dots.dtype).min)")]
XT = [("loop_xtransformers_zip/x_transformers/attend.py", 22, "AMP110")]
XT_FIX = [("sim.masked_fill(~mask[:, None, None, :], -1e9)",
           "sim.masked_fill(~mask[:, None, None, :], -torch.finfo(sim.dtype).max)")]
GPT = [("moduledict_nanogpt/model.py", 38, "AMP110")]
GPT_FIX = [("att.masked_fill(self.bias[:, :, :T, :T] == 0, -1e9)",
            "att.masked_fill(self.bias[:, :, :T, :T] == 0, float(\"-inf\"))")]


def findings(files, config=None):
    return sorted((path, d.line, d.code) for path, result in lint_project(files, SETTINGS, config=config).items()
                  for d in result.diagnostics)


def messages(files, code, config=None):
    return [d.message for result in lint_project(files, SETTINGS, config=config).values()
            for d in result.diagnostics if d.code == code]


# -- for attn, ff in self.layers --------------------------------------------------------------
def test_vit_attention_unpacked_from_each_layer_is_reached():
    files = load("loop_vit_layers")
    assert findings(files) == VIT
    assert findings(files, ON) == VIT
    (message,) = messages(files, "AMP110")
    assert "attn <- Attention(dim, heads=heads, dim_head=dim_head) at vit_pytorch/vit.py:23" in message
    assert "the autocast region at train.py:14" in message
    assert findings(load("loop_vit_layers", VIT_FIX)) == []


@pytest.mark.parametrize("old, new", [
    # only the second element of each item runs: the attention is held, never called
    ("            x = attn(x, mask) + x\n", ""),
    # a starred target is not taken apart
    ("for attn, ff in self.layers:", "for attn, *rest in self.layers:"),
    # the region is a float32 island
    ('torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cuda", dtype=torch.float16, enabled=False)'),
])
def test_vit_elements_not_run_under_the_region_stay_silent(old, new):
    files = load("loop_vit_layers", [(old, new)])
    assert files != load("loop_vit_layers")
    assert findings(files) == []


def test_an_item_that_is_no_tuple_gives_no_element():
    # the layers hold the attentions themselves: `for attn, ff in` them cannot take them apart,
    # and the unpacking names no module (no guess that `attn` is the whole item)
    files = load("loop_vit_layers", [(
        "            self.layers.append(nn.ModuleList([\n"
        "                Attention(dim, heads=heads, dim_head=dim_head),\n"
        "                FeedForward(dim, mlp_dim),\n"
        "            ]))\n",
        "            self.layers.append(Attention(dim, heads=heads, dim_head=dim_head))\n")])
    assert findings(files) == []


LOOP = "        for attn, ff in self.layers:\n            x = attn(x, mask) + x\n            x = ff(x) + x\n"


@pytest.mark.parametrize("new", [
    # a comprehension's `for` clause binds like a loop's (YOLOX/mmdet heads: `[m(x) for m, x in zip(...)]`)
    "        x = x + sum(attn(x, mask) for attn, ff in self.layers)\n",
    "        outs = [ff(attn(x, mask)) for attn, ff in self.layers]\n        x = outs[-1]\n",
    "        x = [block[0](x, mask) for block in self.layers][-1]\n",
])
def test_vit_attention_called_in_a_comprehension_is_reached(new):
    files = load("loop_vit_layers", [(LOOP, new)])
    assert files != load("loop_vit_layers")
    assert findings(files) == VIT
    assert findings(load("loop_vit_layers", [(LOOP, new)] + VIT_FIX)) == []


@pytest.mark.parametrize("new", [
    # only the feed-forwards run
    "        x = x + sum(ff(x) for attn, ff in self.layers)\n",
    # the comprehension's name is its own: the function's `attn` holds nothing of the layers
    "        names = [attn for attn, ff in self.layers]\n        attn = self.norm\n        x = attn(x)\n",
])
def test_vit_comprehensions_that_run_no_attention_stay_silent(new):
    files = load("loop_vit_layers", [(LOOP, new)])
    assert findings(files) == []


# -- for layer_type, (norm, block) in zip(self.layer_types, self.layers) ----------------------
def test_xtransformers_block_taken_from_zip_is_reached():
    files = load("loop_xtransformers_zip")
    assert findings(files) == XT
    assert findings(files, ON) == XT
    (message,) = messages(files, "AMP110")
    assert "block <- Attention(dim, heads=heads, causal=causal) at x_transformers/x_transformers.py:23" in message
    assert findings(load("loop_xtransformers_zip", XT_FIX)) == []


@pytest.mark.parametrize("old, new", [
    ("zip(self.layer_types, self.layers)", "zip(self.layer_types, self.layers, strict=True)"),
    ("for layer_type, (norm, block) in zip(self.layer_types, self.layers):",
     "for (norm, block), layer_type in zip(self.layers, self.layer_types):"),
    ("for layer_type, (norm, block) in zip(self.layer_types, self.layers):",
     "for index, (layer_type, (norm, block)) in enumerate(zip(self.layer_types, self.layers)):"),
])
def test_xtransformers_zip_spellings(old, new):
    files = load("loop_xtransformers_zip", [(old, new)])
    assert files != load("loop_xtransformers_zip")
    assert findings(files) == XT


@pytest.mark.parametrize("replace", [
    # only the norms run
    [("                x = block(x, mask=mask)\n", "                x = norm(x)\n"),
     ("                x = block(x)\n", "                x = norm(x)\n")],
    # zip shadowed by a function of the file: not the builtin
    [("from x_transformers.attend import Attention\n",
      "from x_transformers.attend import Attention\n\n\ndef zip(*lists):\n    return []\n")],
    # a zip of three lists unpacked into two names: no element is known
    [("zip(self.layer_types, self.layers)", "zip(self.layer_types, self.layers, self.layer_types)")],
])
def test_xtransformers_elements_not_called_stay_silent(replace):
    files = load("loop_xtransformers_zip", replace)
    assert files != load("loop_xtransformers_zip")
    assert findings(files) == []


# -- self.transformer.h of an nn.ModuleDict ----------------------------------------------------
def test_nanogpt_blocks_read_by_moduledict_key_are_reached():
    files = load("moduledict_nanogpt")
    assert findings(files) == GPT
    assert findings(files, ON) == GPT
    (message,) = messages(files, "AMP110")
    assert "block <- Block(config) at model.py:85 -> Block in model.py" in message
    assert findings(load("moduledict_nanogpt", GPT_FIX)) == []


@pytest.mark.parametrize("old, new", [
    # the blocks kept under another key than the one the forward reads
    ("            h=nn.ModuleList([Block(config)", "            blocks=nn.ModuleList([Block(config)"),
    # the forward no longer runs the blocks
    ("        for block in self.transformer.h:\n            x = block(x)\n", ""),
    # a key that is no literal string: no key is known, nothing is read by name
    ("        self.transformer = nn.ModuleDict(dict(\n",
     "        self.transformer = nn.ModuleDict(**dict(\n"),
])
def test_nanogpt_other_keys_stay_silent(old, new):
    files = load("moduledict_nanogpt", [(old, new)])
    assert files != load("moduledict_nanogpt")
    assert findings(files) == []


def test_dict_methods_are_not_keys():
    # a plain dict's `get` is the method: `{"get": Block(...)}.get` holds no Block
    files = load("moduledict_nanogpt", [
        ("        for block in self.transformer.h:\n            x = block(x)\n",
         "        for block in self.routes.get(\"h\", []):\n            x = block(x)\n"),
        ("        self.lm_head = nn.Linear(",
         "        self.routes = {\"get\": [Block(config)]}\n        self.lm_head = nn.Linear("),
    ])
    assert findings(files) == []


# -- the hazard runs: CPU float16 autocast --------------------------------------------------------
def _run_vit(tmp_path, files):
    torch = pytest.importorskip("torch")
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sys.path.insert(0, str(tmp_path / "loop_vit_layers"))
    try:
        for name in [m for m in sys.modules if m == "vit_pytorch" or m.startswith("vit_pytorch.")]:
            del sys.modules[name]
        from vit_pytorch import ViT

        torch.manual_seed(0)
        model = ViT(patch_dim=12, num_classes=3, dim=16, depth=2, heads=2, mlp_dim=32, dim_head=8)
        patches = torch.randn(2, 5, 12)
        mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
        with torch.autocast("cpu", dtype=torch.float16):
            return model(patches, mask)
    finally:
        sys.path.remove(str(tmp_path / "loop_vit_layers"))
        for name in [m for m in sys.modules if m == "vit_pytorch" or m.startswith("vit_pytorch.")]:
            del sys.modules[name]


@pytest.mark.torch
def test_vit_hazard_raises_and_the_twin_runs(tmp_path):
    with pytest.raises(RuntimeError, match="Half without overflow"):
        _run_vit(tmp_path / "hazard", load("loop_vit_layers"))
    out = _run_vit(tmp_path / "twin", load("loop_vit_layers", VIT_FIX))
    assert out.shape == (2, 3)
