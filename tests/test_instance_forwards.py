"""What a call of a module instance of the file returns, as a tensor dtype (issue 26,
facts/instance_forwards.py): the dtype fact reads the class's `forward` with the call's
arguments under the caller's region, for a local `Cls(...)`, `self.<attr>` holding one, a
tuple return unpacked or indexed, and an instance passed into a function of the file. Every
dtype rule reading the fact gets it; shown with AMP101 and AMP110.

- outputs_trl_reward (shaped like huggingface/trl's reward trainer: a value head on a causal LM,
  a pairwise loss over the chosen / rejected end rewards): the model's forward returns
  `(hidden, None, rewards)`, `rewards` the value head's nn.Linear output, float16 under the
  caller's autocast; `torch.zeros(n)` takes them by an index put. torch 2.13 CPU autocast
  (bfloat16 and float16) raises 'Index put requires the source and destination dtypes match,
  got Float for the destination and BFloat16 for the source'. AMP101; base code is silent.
- outputs_mmf_heads (shaped like facebookresearch/mmf's contrastive retrieval heads): a
  projection returns `(projected, projected.float())`; the float32 item filled with -1e9 runs
  (torch 2.13 CPU autocast float16), the half one raises 'value cannot be converted to type
  c10::Half without overflow'. AMP110 names the half one only; base code also named the float32
  one (a false finding).
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()


def findings(name, code, replace=()):
    return code_findings(load(name, replace), code, SETTINGS)[0]


def source_findings(source, code):
    return code_findings({"proj/probe.py": source}, code, SETTINGS)[0]


# -- AMP101: a project module's tuple output written into a float32 buffer --------------------
REWARD = "outputs_trl_reward"


def test_reward_model_output_through_a_tuple_is_half_under_autocast():
    assert findings(REWARD, "AMP101") == [("reward_trainer.py", 32, "AMP101")]


def test_twin_building_the_buffer_in_the_rewards_dtype_is_silent():
    assert findings(REWARD, "AMP101", (("device=rewards.device)", "dtype=rewards.dtype, device=rewards.device)"),)) == []


def test_a_forward_returning_float32_rewards_is_not_half():
    assert findings(REWARD, "AMP101", (("return hidden, None, rewards\n", "return hidden, None, rewards.float()\n"),)) == []


def test_a_forward_hook_leaves_the_output_unknown():
    hooked = ("    model = RewardModel(64).cuda()\n",
              "    model = RewardModel(64).cuda()\n    model.register_forward_hook(lambda m, i, o: o)\n")
    assert findings(REWARD, "AMP101", (hooked,)) == []


def test_a_class_with_its_own_call_is_not_read_through_forward():
    own_call = ("class RewardModel(nn.Module):\n",
                "class RewardModel(nn.Module):\n    def __call__(self, x):\n        return x\n\n")
    assert findings(REWARD, "AMP101", (own_call,)) == []


# -- AMP110: the float32 item of a projection's tuple is not half -----------------------------
HEADS = "outputs_mmf_heads"


def test_only_the_half_item_of_a_projection_overflows():
    assert findings(HEADS, "AMP110") == [("heads.py", 28, "AMP110")]


def test_twin_filling_the_float32_items_is_silent():
    assert findings(HEADS, "AMP110", (("image_half.masked_fill", "image_full.masked_fill"),)) == []


# -- one-file variations ----------------------------------------------------------------------
VALUE_HEAD = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "def last_scores(values, attention_mask):\n"
    "    last = attention_mask.sum(dim=-1) - 1\n"
    "    scores = torch.zeros(values.size(0), device=values.device)\n"
    "    scores[last >= 0] = values[last >= 0, last[last >= 0]]\n"
    "    return scores\n\n\n"
    "class ValueHead(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.v_head = nn.Linear(64, 1)\n\n"
    "    def forward(self, hidden_states, scale=1.0):\n"
    "        return self.v_head(hidden_states).squeeze(-1) * scale\n\n\n"
    "def train(hidden, attention_mask):\n"
    "    with torch.autocast(device_type=\"cuda\", dtype=torch.float16):\n"
    "        head = ValueHead().cuda()\n"
    "        values = head(hidden_states=hidden, scale=2.0)\n"
    "        return last_scores(values, attention_mask)\n"
)


def test_keyword_call_of_a_moved_local_instance():
    assert source_findings(VALUE_HEAD, "AMP101") == [("probe.py", 7, "AMP101")]


def test_a_private_helper_of_a_moved_local_instance():
    """`_last_scores` is bound from its one call, surely under the region: the instance's
    output it is given is valued only along the region's call of `forward`, and must reach it."""
    source = VALUE_HEAD.replace("last_scores", "_last_scores")
    assert source_findings(source, "AMP101") == [("probe.py", 7, "AMP101")]


def test_a_private_helper_given_float32_values_is_silent():
    source = VALUE_HEAD.replace("last_scores", "_last_scores").replace(
        "return _last_scores(values, attention_mask)", "return _last_scores(values.float(), attention_mask)")
    assert source_findings(source, "AMP101") == []


def test_an_instance_passed_into_a_helper_of_the_file():
    source = VALUE_HEAD.replace(
        "def train(hidden, attention_mask):\n",
        "def compute_loss(head, hidden, attention_mask):\n"
        "    values = head(hidden)\n"
        "    return last_scores(values, attention_mask).mean()\n\n\n"
        "def train(hidden, attention_mask):\n").replace(
        "        head = ValueHead().cuda()\n"
        "        values = head(hidden_states=hidden, scale=2.0)\n"
        "        return last_scores(values, attention_mask)\n",
        "        head = ValueHead().cuda()\n"
        "        return compute_loss(head, hidden, attention_mask)\n")
    assert source_findings(source, "AMP101") == [("probe.py", 7, "AMP101")]


def test_a_name_bound_to_two_classes_is_unknown():
    source = VALUE_HEAD.replace(
        "        head = ValueHead().cuda()\n",
        "        head = ValueHead().cuda()\n"
        "        if attention_mask is None:\n"
        "            head = Other()\n").replace(
        "def train(", "class Other(nn.Module):\n    def forward(self, hidden_states, scale=1.0):\n"
        "        return hidden_states.float().sum(-1)\n\n\ndef train(")
    assert source_findings(source, "AMP101") == []


# -- AMP105 and AMP141 read the same value -----------------------------------------------------
ENCODER = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Encoder(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(64, 64)\n\n"
    "    def forward(self, x):\n"
    "        return self.proj(x).float()\n\n\n"
    "class Trainer:\n"
    "    def __init__(self):\n"
    "        self.encoder = Encoder()\n"
    "        self.head = nn.Linear(64, 10)\n\n"
    "    def step(self, x):\n"
    "        with torch.autocast(\"cuda\", dtype=torch.float16):\n"
    "            feats = self.encoder(x)\n"
    "        return self.head(feats)\n\n\n"
    "def run(x):\n"
    "    encoder = Encoder()\n"
    "    head = nn.Linear(64, 10)\n"
    "    with torch.autocast(\"cuda\", dtype=torch.float16):\n"
    "        feats = encoder(x)\n"
    "    return head(feats)\n"
)


def test_an_encoder_whose_forward_ends_float_does_not_escape_half():
    # torch 2.13 CPU autocast float16: `feats` is float32, `head(feats)` runs
    assert source_findings(ENCODER, "AMP105") == []


def test_twin_encoder_returning_the_linear_output_escapes_half():
    source = ENCODER.replace("return self.proj(x).float()", "return self.proj(x)")
    assert source_findings(source, "AMP105") == [("probe.py", 22, "AMP105"), ("probe.py", 30, "AMP105")]


HALF_MODELS = (
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Classifier(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(8, 8)\n\n"
    "    def forward(self, x):\n"
    "        return self.fc(x).float()\n\n\n"
    "class Plain(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(8, 8)\n\n"
    "    def forward(self, x):\n"
    "        return self.fc(x)\n\n\n"
    "def evaluate(x):\n"
    "    model = Classifier().half()\n"
    "    logits = model(x.half())\n"
    "    return logits.softmax(-1).sum()\n\n\n"
    "def evaluate_plain(x):\n"
    "    model = Plain().half()\n"
    "    logits = model(x.half())\n"
    "    return logits.sum()\n"
)


def test_a_half_model_whose_forward_ends_float_returns_float32():
    # torch 2.13 CPU: Classifier().half()(x.half()) is float32, Plain().half()(x.half()) float16
    assert source_findings(HALF_MODELS, "AMP141") == [("probe.py", 32, "AMP141")]


# -- the dtype claims, by execution (torch 2.13 CPU autocast bfloat16) ------------------------
torch = pytest.importorskip("torch")


@pytest.mark.torch
def test_module_instance_outputs_match_execution():
    from dtype_recorder import compare, predictions, record

    source = (
        "import torch\nfrom torch import nn\n"
        "class Head(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(8, 8)\n"
        "    def forward(self, x):\n"
        "        h = self.fc(x)\n"
        "        return h, h.float()\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.head = Head()\n"
        "    def forward(self, x):\n"
        "        with torch.autocast(\"cpu\", dtype=torch.bfloat16):\n"
        "            low, full = self.head(x)\n"
        "            a = low * 2\n"
        "            b = full * 2\n"
        "            c = self.head(x)[1] + 1\n"
        "        return a, b, c\n"
        "def score(m, x):\n"
        "    return m(x)\n"
        "def run(x):\n"
        "    net = Model()\n"
        "    head = Head()\n"
        "    with torch.autocast(\"cpu\", dtype=torch.bfloat16):\n"
        "        low, full = head(x)\n"
        "        d = low - 1\n"
        "        e = full - 1\n"
        "    return net(x), d, e\n"
        "class Full(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(8, 8)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x).float()\n"
        "def half_run(x):\n"
        "    m = Full().half()\n"
        "    f = m(x.half()) * 2\n"
        "    return f\n"
        "out = run(torch.randn(2, 8))\n"
        "out2 = half_run(torch.randn(2, 8))\n"
    )
    observed = record(source, "<instance-forward-program>", {})
    checked, confirmed, failures = compare(source, observed, "bfloat16")
    assert not failures, "\n".join(failures)
    predicted = predictions(source)
    lines = source.splitlines()
    named = {lines[span[0] - 1][span[1]:span[3]]: value.options for span, value in predicted.items()
             if span[0] == span[2] and span[0] in (17, 18, 19, 28, 29, 39)}
    assert named.get("low * 2") == {"bfloat16"}, named
    assert named.get("full * 2") == {"float32"}, named
    assert named.get("self.head(x)[1] + 1") == {"float32"}, named
    assert named.get("low - 1") == {"bfloat16"}, named
    assert named.get("full - 1") == {"float32"}, named
    assert named.get("m(x.half()) * 2") == {"float32"}, named
