"""Methods a half class inherits are fp16 code of its instances, as its own methods are (issue 26,
the class hierarchy): a base or mixin method the half class does not override runs on the half
instance, in the same file (facts/fp16.py `_inherited`) or in another file
(project/inherited_halves.py, an EntryHalfBase of the base's file). Resolution is the MRO's:
a method the half class, or a base nearer to it, overrides is not the base's to flag. Each
dtype claim is proven on CPU with torch (`.half()` models, index_put of a float16 source)."""

from __future__ import annotations

import os
import sys

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts
from amplint.analysis.project import lint_project

from project_files import PROJECTS, load, project_findings  # noqa: E402

SETTINGS = Settings.default()
PROJECT = "inherit_dinov2_mixin"
FIX = ("torch.zeros(n, self.embed_dim, device=images.device)",
       "torch.zeros(n, self.embed_dim, device=images.device, dtype=images.dtype)")

BASE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "\n"
    "class FeatureBase(nn.Module):\n"
    "    def extract(self, images, chunk=2):\n"
    "        n = images.shape[0]\n"
    "        feats = torch.zeros(n, 8, device=images.device)\n"
    "        for start in range(0, n, chunk):\n"
    "            rows = torch.arange(start, min(start + chunk, n), device=images.device)\n"
    "            feats[rows] = self(images[rows])\n"
    "        return feats\n"
    "\n"
    "\n"
    "class Encoder(FeatureBase):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(8, 8)\n"
    "\n"
    "    def forward(self, x):\n"
    "        return self.proj(x)\n"
    "\n"
    "\n"
    "model = Encoder().to(torch.float16)\n"
)
# the subclass overrides the base's method with one that keeps the dtype: the base's is not run
OVERRIDE = ("    def forward(self, x):\n",
            "    def extract(self, images, chunk=2):\n"
            "        return torch.cat([self(images[i:i + chunk]) for i in range(0, images.shape[0], chunk)])\n"
            "\n"
            "    def forward(self, x):\n")
# two levels: the half class derives from a class that derives from the one defining the method
MIDDLE = ("class Encoder(FeatureBase):\n", "class Backbone(FeatureBase):\n    pass\n\n\nclass Encoder(Backbone):\n")
# a mixin (no nn.Module) listed first, as SwinIR lists its tiling mixin
MIXIN = [("class FeatureBase(nn.Module):\n", "class FeatureMixin:\n"),
         ("class Encoder(FeatureBase):\n", "class Encoder(FeatureMixin, nn.Module):\n")]
# the base serves only a float32 class; the half class is another module
UNRELATED = [("class Encoder(FeatureBase):\n",
              "class Probe(FeatureBase):\n    def forward(self, x):\n        return x\n\n\nclass Encoder(nn.Module):\n")]


def _source(*replace):
    text = BASE
    for old, new in replace:
        assert old in text
        text = text.replace(old, new)
    return text


def _codes(source):
    return [(d.line, d.code) for d in lint_source("probe.py", source, SETTINGS).diagnostics]


def _runs(source, cls="Encoder"):
    """Run the extraction of `source` on CPU: None when it runs, else the error."""
    torch = pytest.importorskip("torch")
    scope = {}
    exec(compile(source, "probe.py", "exec"), scope)
    model = scope["model"]
    if not isinstance(model, scope[cls]) or not hasattr(model, "extract"):
        return None
    try:
        model.extract(torch.randn(4, 8).half())
    except RuntimeError as err:
        return str(err)
    return None


@pytest.mark.torch
@pytest.mark.parametrize("replace", [(), (MIDDLE,), MIXIN])
def test_an_inherited_method_of_a_half_class_is_fp16_code(replace):
    source = _source(*replace)
    assert "Index put requires the source and destination dtypes match" in _runs(source)
    assert (8, "AMP101") in _codes(source)
    message = [d.message for d in lint_source("probe.py", source, SETTINGS).diagnostics if d.code == "AMP101"][0]
    assert "`extract` inherited by `Encoder`; `Encoder` is made half at line" in message


@pytest.mark.torch
@pytest.mark.parametrize("replace", [(OVERRIDE,), (MIDDLE, OVERRIDE), UNRELATED])
def test_a_base_method_the_half_instance_does_not_run_stays_silent(replace):
    source = _source(*replace)
    assert _runs(source) is None
    assert [c for c in _codes(source) if c[1] == "AMP101"] == []


def test_the_override_of_a_nearer_base_is_the_one_taken():
    # Encoder(Backbone), Backbone(FeatureBase) overrides `extract`: FeatureBase.extract is not
    # fp16 code, Backbone.extract is
    source = _source(MIDDLE, ("class Backbone(FeatureBase):\n    pass\n",
                              "class Backbone(FeatureBase):\n    def extract(self, images):\n        return self(images)\n"))
    fp16 = FileFacts(cst.parse_module(source)).fp16
    tree = fp16.tree
    assert id(tree.classes["Backbone"].functions["extract"]) in fp16.functions
    assert id(tree.classes["FeatureBase"].functions["extract"]) not in fp16.functions


def test_a_mixin_in_another_file_runs_on_the_half_model():
    # facebookresearch/dinov2 laid out with feature extraction moved into a mixin
    # (dinov2/utils/features.py) that DinoVisionTransformer (dinov2/models/) inherits; the
    # k-NN eval (dinov2/eval/knn.py) builds the model through `vit_small()` and turns it half
    results = lint_project(load(PROJECT), SETTINGS)
    assert project_findings(results) == [("dinov2/utils/features.py", 9, "AMP101")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics]
    assert ("inherited by `DinoVisionTransformer` (models/vision_transformer.py); "
            "vit_small() at eval/knn.py:7 made float16") in message
    assert project_findings(lint_project(load(PROJECT, [FIX]), SETTINGS)) == []  # the clean twin
    # the model overrides the mixin's method: the mixin's is never run on it
    override = ("    def forward(self, x):\n",
                "    def extract_features(self, images, chunk=8):\n        return self(images)\n\n    def forward(self, x):\n")
    assert project_findings(lint_project(load(PROJECT, [override]), SETTINGS)) == []
    # nothing made half: nothing to flag
    uncast = ("    return model.cuda().half()\n", "    return model.cuda()\n")
    assert project_findings(lint_project(load(PROJECT, [uncast]), SETTINGS)) == []


@pytest.mark.torch
def test_the_project_hazard_raises_under_torch():
    torch = pytest.importorskip("torch")
    root = os.path.join(PROJECTS, PROJECT)
    sys.path.insert(0, root)
    try:
        from dinov2.models.vision_transformer import vit_small
        model = vit_small(in_dim=8).half()
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            model.extract_features(torch.randn(4, 8).half(), chunk=2)
    finally:
        sys.path.remove(root)
        for name in [n for n in sys.modules if n == "dinov2" or n.startswith("dinov2.")]:
            del sys.modules[name]


def test_the_prefilter_reads_an_inherited_base_as_half():
    # a file whose entries are EntryHalfBase is prefiltered as one with EntryHalf (the whole base
    # class read: a superset of the listed methods), not parsed whatever its text holds
    from amplint.analysis.engine import could_match
    from amplint.analysis.facts.region_entries import EntryHalfBase

    mixin = load(PROJECT)[f"{PROJECT}/dinov2/utils/features.py"]
    entry = (EntryHalfBase("FeatureExtractMixin", ("extract_features",), "float16", "inherited"),)
    rules = Settings.default().rules()
    assert could_match(mixin, rules, entry)
    quiet = mixin.replace("torch.zeros(n, self.embed_dim, device=images.device)", "images.new_zeros(n, self.embed_dim)")
    assert not could_match(quiet, rules, entry)
    assert project_findings(lint_project(load(PROJECT, [FIX]), SETTINGS)) == []


# A tiling mixin (JingyunLiang/SwinIR's tiled inference moved into utils/) whose inherited
# `forward_tiled` calls `self.embed(x)`: the half model overrides `embed`, so the mixin's own
# `embed` (a float16 sum of squares if it ran) never runs on the half instance.
TILED = ("class TiledMixin:\n    def forward_tiled(self, x):\n        return self.embed(x)\n\n"
         "    def embed(self, x):\n        return x / x.pow(2).sum(dim=-1, keepdim=True).sqrt()\n")
NET = ("import torch.nn as nn\n\nfrom utils import TiledMixin\n\n\nclass Net(TiledMixin, nn.Module):\n"
       "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n\n"
       "    def embed(self, x):\n        return self.proj(x)\n\n"
       "    def forward(self, x):\n        return self.proj(self.forward_tiled(x))\n")
MAIN = "from model import Net\n\n\ndef main(x):\n    model = Net().half()\n    return model(x.half())\n"
NOT_OVERRIDDEN = ("    def embed(self, x):\n        return self.proj(x)\n\n", "")


def _amp141(files):
    return sorted((path, d.line) for path, r in lint_project(files, SETTINGS).items()
                  for d in r.diagnostics if d.code == "AMP141")


def test_self_call_of_an_inherited_method_runs_the_half_class_override():
    files = {"utils.py": TILED, "model.py": NET, "main.py": MAIN}
    assert _amp141(files) == []
    files["model.py"] = NET.replace(*NOT_OVERRIDDEN)  # the twin: the mixin's `embed` runs on it
    assert _amp141(files) == [("utils.py", 6)]
    # the mixin in the model's own file
    one = {"model.py": TILED + "\n\n" + NET.replace("from utils import TiledMixin\n", ""), "main.py": MAIN}
    assert _amp141(one) == []
    one["model.py"] = one["model.py"].replace(*NOT_OVERRIDDEN)
    assert _amp141(one) == [("model.py", 6)]
