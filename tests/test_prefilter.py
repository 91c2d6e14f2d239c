"""The text prefilter (issue 14): a file it keeps away from LibCST gives no finding.

Each rule's trigger words, and the requirements of amplint/analysis/data/triggers.py, let through
every example the rule must flag; a requirement that only a region can meet (AMP111, AMP153)
is met by the entries the project pass gives, which bypass the prefilter."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.data.triggers import ALSO_NEEDS, REGION_WORDS
from amplint.analysis.engine import Settings, analyze, could_match
from amplint.analysis.parsing import parse
from amplint.analysis.project import lint_project
from amplint.analysis.rules import all_rules

RULES = all_rules()
DEFAULT = Settings.default().rules()
EXAMPLES = [
    pytest.param(code, index, flag.code, id=f"{code}-{index}")
    for code, rule in sorted(RULES.items()) for index, flag in enumerate(rule.flag)
]


@pytest.mark.parametrize("code,index,text", EXAMPLES)
def test_every_flag_example_passes_the_prefilter(code, index, text):
    assert could_match(text, [RULES[code]])
    assert could_match(text, DEFAULT) or not RULES[code].default
    assert analyze("example.py", text, parse(text), [RULES[code]])  # the example is a finding


@pytest.mark.parametrize("code", sorted(RULES))
def test_a_skipped_example_gives_no_finding(code):
    rule = RULES[code]
    for text in [flag.code for flag in rule.flag] + list(rule.clean):
        if not could_match(text, [rule]):
            assert analyze("example.py", text, parse(text), [rule]) == []


def test_requirements_are_region_words_of_gated_rules():
    assert set(ALSO_NEEDS) <= set(RULES)
    for code, needs in ALSO_NEEDS.items():
        assert needs and not set(needs) & set(RULES[code].triggers)


MINER = (
    "import torch\n"
    "def mine(embeddings, ref, mask):\n"
    "    mat = embeddings @ ref.T\n"
    "    return mat.masked_fill(mask, torch.finfo(embeddings.dtype).max)\n"
)
TRAIN = (
    "import torch\n"
    "from miner import mine\n"
    "def step(embeddings, ref, mask):\n"
    '    with torch.autocast("cuda", dtype=torch.float16):\n'
    "        return mine(embeddings, ref, mask)\n"
)


def test_finfo_without_a_region_is_not_parsed_and_gives_nothing():
    rule = RULES["AMP111"]
    assert not could_match(MINER, [rule])
    assert not could_match(MINER, DEFAULT)
    assert analyze("miner.py", MINER, parse(MINER), [rule]) == []
    with_region = MINER.replace("    mat = embeddings @ ref.T\n",
                                '    with torch.autocast("cuda"):\n        mat = embeddings @ ref.T\n')
    assert could_match(with_region, [rule])
    assert [d.code for d in analyze("miner.py", with_region, parse(with_region), [rule])] == ["AMP111"]


def test_entries_from_another_file_bypass_the_requirement():
    results = lint_project({"miner.py": MINER, "train.py": TRAIN}, Settings.default())
    assert [d.code for d in results["miner.py"].diagnostics] == ["AMP111"]
    assert not any(word in MINER for word in REGION_WORDS)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_runner_finds_it_through_the_project_pass(tmp_path, jobs):
    (tmp_path / "miner.py").write_text(MINER)
    (tmp_path / "train.py").write_text(TRAIN)
    for index in range(16):  # enough files for two processes
        (tmp_path / f"other{index}.py").write_text(f"x{index} = {index}\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["--output-format", "json", "--no-cache", "--jobs", jobs, "."])
    finally:
        os.chdir(old)
    found = [(os.path.basename(d["filename"]), d["code"]) for d in json.loads(result.stdout)]
    assert found == [("miner.py", "AMP111")]


# A half-dtype word (data/triggers.HALF_WORDS) in a file with no other trigger word: parsed only
# when it names something in code outside a comparison.
HALF_MODULE = (
    "import torch\n"
    "from torch import nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.proj = nn.Linear(8, 8)\n\n"
    "    def forward(self, x, mask):\n"
    "        # this model runs in torch.float16 on GPUs\n"
    "        h = self.proj(x)\n"
    "        if h.dtype == torch.float16 or h.dtype in (torch.float16, torch.bfloat16):\n"
    "            pass\n"
    "        return h.masked_fill(mask, -1e9)\n\n\n"
    "def deploy():\n"
    '    """Build the model for float16 inference."""\n'
    "    net = Net()\n"
    "    return net.eval()\n"
)
HALF_MADE = [
    ("    return net.eval()\n", "    return net.half().eval()\n"),
    ("    return net.eval()\n", "    return net.to(torch.float16).eval()\n"),
    ("    return net.eval()\n", "    return net.to(device, dtype=torch.half)\n"),
    ("    return net.eval()\n", "    return net.to(F16)\n"),
]
IMPORTS = {"F16": "from torch import float16 as F16\n",
           "convert_module_to_f16": "from fp16_util import convert_module_to_f16\n"}


def test_half_words_only_in_comparisons_strings_and_comments_are_not_parsed():
    assert not could_match(HALF_MODULE, DEFAULT)
    assert analyze("net.py", HALF_MODULE, parse(HALF_MODULE), DEFAULT) == []
    # a variable or parameter named after a dtype casts nothing
    flagged = HALF_MODULE.replace("def deploy():", "def deploy(load_bfloat16=False, fp16_f16=None):")
    assert not could_match(flagged, DEFAULT)


@pytest.mark.parametrize("cast", ["net.bfloat16()", "net.to(torch.bfloat16)", "net.apply(to_f16)",
                                  "net.type(half)"])
def test_every_spelling_of_a_half_cast_is_parsed(cast):
    text = HALF_MODULE.replace("    return net.eval()\n", f"    return {cast}\n")
    assert could_match(("from torch import half\n" if "half)" in cast else "") + text, DEFAULT)


@pytest.mark.parametrize("old, new", HALF_MADE)
def test_a_half_cast_in_code_is_parsed_and_found(old, new):
    text = HALF_MODULE.replace(old, new)
    text = "".join(line for name, line in IMPORTS.items() if name in new) + text
    assert text != HALF_MODULE
    assert could_match(text, DEFAULT)
    found = [d.code for d in analyze("net.py", text, parse(text), DEFAULT)]
    assert "AMP110" in found  # masked_fill(-1e9) in the forward of a float16 module


def test_a_half_converter_handed_to_apply_is_parsed():
    text = IMPORTS["convert_module_to_f16"] + HALF_MODULE.replace(
        "    return net.eval()\n", "    net.apply(convert_module_to_f16)\n    return net\n")
    assert could_match(text, DEFAULT)


def test_a_half_word_in_a_file_python_cannot_parse_goes_on_to_the_parser():
    broken = HALF_MODULE + "def oops(:\n"
    assert could_match(broken, DEFAULT)


@pytest.mark.parametrize("decorated", [
    '@pytest.mark.parametrize("module", [Net(), Net().half()])\ndef test_net(module):\n    pass\n',
    '@register(Net().half())\nclass Holder:\n    pass\n',
    'class Suite:\n    @pytest.mark.parametrize("module", [Net().half()])\n    async def test_net(self, module):\n        pass\n',
])
def test_a_half_cast_in_a_decorator_is_parsed_and_found(decorated):
    # a def's line is its `def`, below its decorators: they are searched too
    text = "import pytest\n" + HALF_MODULE + "\n\n" + decorated
    assert could_match(text, DEFAULT)
    assert "AMP110" in [d.code for d in analyze("test_net.py", text, parse(text), DEFAULT)]
