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


# -- files with entries (issue 34): data/triggers.ENTRY_NEEDS ----------------------------------
import decimal  # noqa: E402
import re  # noqa: E402

import amplint.analysis.engine as engine  # noqa: E402
from amplint.analysis.data.triggers import ENTRY_BLIND, ENTRY_KINDS, ENTRY_NEEDS  # noqa: E402
from amplint.analysis.facts.region_entries import EntryHalf, EntryRegion  # noqa: E402
from amplint.analysis.facts.regions import Enabled  # noqa: E402
from amplint.analysis.prefilter import could_match as prefilter_could_match  # noqa: E402
from amplint.analysis.prefilter_entries import TINY_BELOW, CodeNames  # noqa: E402
from project_files import PROJECTS, load  # noqa: E402

REGION_ENTRY = (EntryRegion("f", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)
HALF_ENTRY = (EntryHalf("Net", "float16", "model <- Net() at deploy.py:7 made half"),)
QUIET = "import os\n\n\ndef f(x):\n    return os.path.join(x, 'a')\n"


def test_every_rule_is_classified_for_files_with_entries():
    assert set(ENTRY_NEEDS) | set(ENTRY_BLIND) == set(RULES)
    assert not set(ENTRY_NEEDS) & set(ENTRY_BLIND)
    assert set(ENTRY_KINDS) == {"EntryRegion", "EntryHalf", "EntryHalfBase"}
    from amplint.analysis.prefilter_entries import _MARK_TEXT

    marks = {need for _, needs in ENTRY_NEEDS.values() for need in needs if need.startswith("<")}
    assert marks <= set(_MARK_TEXT)  # each mark has the text it needs, checked before `ast`
    # the whole default set can keep a quiet file with entries away from LibCST
    assert not could_match(QUIET, DEFAULT, REGION_ENTRY)
    assert not could_match(QUIET, DEFAULT, HALF_ENTRY)


@pytest.mark.parametrize("code,index,text", EXAMPLES)
def test_every_flag_example_meets_its_requirement_with_entries(code, index, text):
    for entries in (REGION_ENTRY, HALF_ENTRY):
        assert could_match(text, [RULES[code]], entries)
        assert could_match(text, DEFAULT, entries) or not RULES[code].default


def test_another_entry_kind_is_always_parsed():
    from amplint.analysis.facts.region_entries import EntryParamRegion

    param = EntryParamRegion("f", "ctx", Enabled.TRUE, "cuda", "float16", "ctx() at a.py:1")
    assert could_match(QUIET, DEFAULT, REGION_ENTRY + (param,))


def _last(qualified):
    return qualified.rsplit(".", 1)[-1]


def _needs(code, text, scope=None):
    """Does `text`'s code meet the requirement of `code` (in the whole file)?"""
    names = CodeNames.of(text).names
    return bool(names.intersection(ENTRY_NEEDS[code][1]))


def test_requirements_name_every_hazard_of_the_rules_tables():
    """Each requirement covers the names the rule's code looks for (a qualified name's last
    part is in the code: the call or its import names it)."""
    from amplint.analysis.data import overflow
    from amplint.analysis.data.scaler_vocab import BY_METHOD
    from amplint.analysis.facts import fp16
    from amplint.analysis.facts.grad_forwards import SET_GRAD
    from amplint.analysis.facts.nograd_methods import NO_GRAD
    from amplint.analysis.rules import amp101_factory_default_dtype as r101
    from amplint.analysis.rules import amp102_bce_under_autocast as r102
    from amplint.analysis.rules import amp104_backward_in_autocast as r104
    from amplint.analysis.rules import amp140_eps_underflow as r140
    from amplint.analysis.rules import amp141_half_reduction as r141

    def call(qualified):
        return f"import torch\nx = {qualified}(y)\n"

    assert all(_needs("AMP101", call(name)) for name in r101.FACTORIES)
    assert _needs("AMP101", "from torch import zeros as z\nx = z(3)\n")
    assert all(_needs("AMP102", call(name)) for name in r102.BCE_FUNCTIONS + (r102.BCE_CLASS,))
    half_names = [n for n, d in fp16.DTYPES.items() if d in fp16.HALF] + list(fp16.TENSOR_TYPES)
    for code in ("AMP103", "AMP152"):
        assert all(_needs(code, f"m = m.to({name})\n") for name in half_names + ["m.half", "m.bfloat16"])
    for name in ("convert_module_to_f16", "to_fp16", "to_bf16", "convert_to_half"):
        assert _needs("AMP152", f"m.apply({name})\n") and not _needs("AMP103", f"m.apply({name})\n")
    verbs = [m for m, vs in BY_METHOD.items() if any("backward" in v.events for v in vs)]
    for name in list(r104.BACKWARD_FUNCTIONS) + ["loss.backward", "self.manual_backward"] + verbs:
        assert _needs("AMP104", call(name))
    assert not _needs("AMP104", "with torch.no_grad():\n    p.requires_grad_(False)\n# backward\n")
    from amplint.analysis.data.triggers import FILL_NAMES

    assert {_last(name) for name in overflow.FUNCTIONS} | set(overflow.METHODS) <= set(FILL_NAMES)
    for name in list(overflow.FUNCTIONS) + ["x." + m for m in overflow.METHODS]:
        assert _needs("AMP110", f"import torch\nx = {name}(m, -1e9)\n")
        assert not _needs("AMP110", f"import torch\nx = {name}(m, v)\n")
    assert _needs("AMP110", "from torch import full as F\nx = F((3,), fill_value=NEG)\nNEG = -2 ** 16\n")
    for value in ("1e9", "-1e9", "2 ** 16", "float('1e9')", "-INF", "torch.finfo(torch.float32).min",
                  "int(big)"):
        store = f"INF = 10 ** 9\nbig = 2 ** 20\ndef f(x, m):\n    x[m] = {value}\n    y[m]: float = {value}\n"
        assert _needs("AMP110", store), value
    assert not _needs("AMP110", "def f(x, m, v):\n    x[m] = v\n    x[m] = y[m]\n    a = 1e9\n")
    assert r140.THRESHOLD == TINY_BELOW
    assert _needs("AMP140", "import torch\nopt = torch.optim.Adam(p)\n")
    for name in r141.SQUARE_SUMS + r141.OUTPUT_REDUCTIONS + ("cumsum",):
        assert _needs("AMP141", call(f"x.{name}")) and _needs("AMP141", call(f"torch.{name}"))
    for name in NO_GRAD + SET_GRAD:
        assert _needs("AMP150", f"with {name}():\n    pass\n")


@pytest.mark.parametrize("value", [5.9e-8, 1e-8, 1e-12, 3e-45, 1e-300])
def test_every_spelling_of_a_tiny_eps_meets_amp140s_requirement(value):
    plain = format(decimal.Decimal(repr(value)), "f")  # 0.00000001
    spellings = {repr(value), f"{value:e}", f"{value:E}", plain, plain.lstrip("0"),
                 f"{value:.3e}".replace("e-", "e-0")}
    digits = plain[2:]
    spellings.add("0." + "_".join(digits[i:i + 3] for i in range(0, len(digits), 3)))
    for text in spellings:
        assert 0 < float(text.replace("_", "")) < 6e-8
        assert _needs("AMP140", f"def f(x, eps={text}):\n    return x\n"), text
    assert not _needs("AMP140", "y = x + 1.0\nz = x * 0.001  # 1e-8\ns = '1e-8'\n")


REACHING = (
    "import torch\n\n\n"
    "def helper(x):\n"
    "    return torch.zeros(3) + x.sum()\n\n\n"
    "def unreached(x):\n"
    "    x.backward()\n"
    "    return torch.zeros(4).sum()\n\n\n"
    "class Head(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x.mean()\n\n"
    "    def other(self, x):\n"
    "        return x.std()\n\n\n"
    "def entry(x):\n"
    "    return {call}\n"
)


@pytest.mark.parametrize("call, reached", [
    ("x + 1", set()),
    ("helper(x)", {"zeros", "sum", "mean"}),  # any call may run a module's forward
    ("Head()(x)", {"mean"}),
    ("x.other", set()),
])
def test_the_code_an_entry_region_reaches(call, reached):
    text = REACHING.format(call=call)
    names = frozenset().union(*CodeNames.of(text).reached(("entry",)))
    hazards = {"zeros", "sum", "mean", "std", "backward"}
    assert names & hazards == reached
    assert CodeNames.of(text).names >= hazards  # the whole file names them all


def _parse_forced(monkeypatch):
    """The engine as on main: every file with entries is parsed."""
    real = engine.could_match
    monkeypatch.setattr(engine, "could_match",
                        lambda source, rules, entries=(): bool(entries) or real(source, rules))


def _outcome(result):
    return ([(d.code, d.line, d.column, d.message) for d in result.diagnostics],
            result.errors, result.warnings, result.fixed_source)


PROJECT_NAMES = sorted(os.listdir(PROJECTS))


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_a_file_with_entries_kept_out_gives_no_finding(monkeypatch, name):
    """Each test project linted as on main (files with entries always parsed): every finding
    of a file with entries meets its own rule's requirement, and the engine gives the same
    results with the prefilter."""
    files = load(name)
    seen = {}
    real = engine.lint_source

    def recording(path, source, settings, *args, **kwargs):
        result = real(path, source, settings, *args, **kwargs)
        entries = kwargs.get("entries", ())
        if entries:
            seen[path] = (source, entries, result)
        return result

    _parse_forced(monkeypatch)
    monkeypatch.setattr(engine, "lint_source", recording)
    forced = lint_project(files, Settings.default())
    monkeypatch.undo()
    for path, (source, entries, result) in seen.items():
        for diag in result.diagnostics:
            assert prefilter_could_match(source, [RULES[diag.code]], entries), (path, diag.code)
    results = lint_project(files, Settings.default())
    assert {p: _outcome(r) for p, r in results.items()} == {p: _outcome(r) for p, r in forced.items()}


def test_the_project_tests_keep_files_with_entries_away_from_libcst():
    """Not vacuous: many files with entries of the test projects are skipped, some with findings
    through entries are not."""
    skipped = parsed_with_findings = 0
    real = engine.lint_source

    def counting(path, source, settings, *args, **kwargs):
        nonlocal skipped, parsed_with_findings
        result = real(path, source, settings, *args, **kwargs)
        entries = kwargs.get("entries", ())
        if entries and not kwargs.get("summarize"):
            if not prefilter_could_match(source, settings.rules(), entries):
                skipped += 1
            elif result.diagnostics:
                parsed_with_findings += 1
        return result

    engine_lint = engine.lint_source
    engine.lint_source = counting
    try:
        for name in PROJECT_NAMES:
            lint_project(load(name), Settings.default())
    finally:
        engine.lint_source = engine_lint
    assert skipped >= 5 and parsed_with_findings >= 5, (skipped, parsed_with_findings)


LOSSES = (
    "import torch\n\n\n"
    "def iou_loss(pred, target, weights):\n"
    "    overlap = torch.min(pred, target).clamp(min=0)\n"
    "    return (1 - overlap / (pred + target - overlap)) * weights\n"
)
TRAINER = (  # (its module shown: a callee's name is no evidence of a module output)
    "import torch\n"
    "from losses import iou_loss\n\n\n"
    "class Trainer:\n"
    "    def __init__(self):\n"
    "        self.model = torch.nn.Linear(8, 8)\n\n"
    "    def step(self, batch, optimizer):\n"
    "        with torch.autocast('cuda', dtype=torch.float16):\n"
    "            pred = self.model(batch['x'])\n"
    "            loss = iou_loss(pred, batch['y'], batch['w'])\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)


def test_a_file_with_region_entries_and_no_hazard_is_not_parsed(monkeypatch):
    """Counts the LibCST parses the lint of losses.py makes: main parses it (it has entries).
    (lint_project's own project pass may parse it for a summary; the runner's reads `ast`.)"""
    texts = []
    entries_of = {}
    linting = []
    real_parse, real_lint = engine.parse, engine.lint_source

    def parse(source, *args, **kwargs):
        if linting:
            texts.append(source)
        return real_parse(source, *args, **kwargs)

    def lint(path, source, settings, *args, **kwargs):
        entries_of[path] = kwargs.get("entries", ())
        linting.append(path)
        try:
            return real_lint(path, source, settings, *args, **kwargs)
        finally:
            linting.pop()

    monkeypatch.setattr(engine, "parse", parse)
    monkeypatch.setattr(engine, "lint_source", lint)
    results = lint_project({"losses.py": LOSSES, "train.py": TRAINER}, Settings.default())
    # the region reaches iou_loss, and binds its `pred` to the model's output (region_args.py):
    # evidence for AMP101's factory writes only, and the file makes no factory
    assert sorted(type(e).__name__ for e in entries_of["losses.py"]) == ["EntryRegion", "EntryRegionArg"]
    assert texts.count(LOSSES) == 0
    assert results["losses.py"].diagnostics == [] and results["losses.py"].errors == []
    # with a hazard the region makes one, it is parsed and found
    hazard = LOSSES.replace("    return (", "    loss = torch.nn.functional.binary_cross_entropy(pred, target)\n    return loss + (")
    results = lint_project({"losses.py": hazard, "train.py": TRAINER}, Settings.default())
    assert texts.count(hazard) == 1
    assert [d.code for d in results["losses.py"].diagnostics] == ["AMP102"]


@pytest.mark.parametrize("broken", ["def f(:\n    pass\n", "x = (1,\n", "def f():\nreturn 1\n",
                                    "x = 1\r\ny = 2\n  z = 3\n"])
def test_a_broken_file_with_entries_reports_as_before(monkeypatch, broken):
    settings = Settings.default()
    now = engine.lint_source("bad.py", broken, settings, entries=REGION_ENTRY)
    _parse_forced(monkeypatch)
    before = engine.lint_source("bad.py", broken, settings, entries=REGION_ENTRY)
    assert now.errors and now.errors == before.errors


@pytest.mark.parametrize("write, kept", [
    ("    return buf + h\n", False),
    ("    buf[idx] = h @ h\n    return buf\n", True),
    ("    buf.index_put_((idx,), h)\n    return buf\n", True),
    ("    torch.mm(h, h, out=buf)\n    return buf\n", True),
    ("    return torch.cat([buf, h])\n", True),
    ("    return torch.cat(tensors=(h, buf))\n", True),
    ("    other = h.clone()\n    other[idx] = h\n    return torch.cat([other, h]) + buf\n", False),
])
def test_amp101_under_an_entry_region_needs_a_write_in_the_factorys_function(write, kept):
    text = ("import torch\n\n\ndef pad(h, idx):\n    buf = torch.zeros(h.shape)\n" + write)
    rules = [RULES["AMP101"]]
    entries = (EntryRegion("pad", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)
    assert could_match(text, rules, entries) is kept
    # fp16 code is the half class's methods, whatever they write (issue 34: no class Net here)
    assert not could_match(text, rules, HALF_ENTRY)
    method = text.replace("def pad(h", "class Net:\n    def pad(self, h").replace("\n    ", "\n        ")
    assert could_match(method.replace("\n        def pad", "\n    def pad"), rules, HALF_ENTRY)
    if not kept:
        assert analyze("pad.py", text, parse(text), rules, entries) == []
    elif "idx] = h @ h" in write:
        assert [d.code for d in analyze("pad.py", text, parse(text), rules, entries)] == ["AMP101"]


@pytest.mark.parametrize("body, kept", [
    ("    return h.sum(-1)\n", False),
    ("    return (h * h).sum(-1)\n", True),
    ("    return (h ** 2).mean()\n", True),
    ("    return h.pow(2).sum()\n", True),
    ("    e = h.exp()\n    return e / e.sum(-1, keepdim=True)\n", True),
    ("    return (h * w).sum(-1)\n", False),
])
def test_amp141_under_an_entry_region_needs_a_square_or_exp_in_the_function(body, kept):
    text = "import torch\n\n\ndef energy(x, w):\n    h = x @ w\n" + body
    rules = [RULES["AMP141"]]
    entries = (EntryRegion("energy", Enabled.TRUE, "cuda", "float16", "called at train.py:3"),)
    assert could_match(text, rules, entries) is kept
    if not kept:
        assert analyze("energy.py", text, parse(text), rules, entries) == []


HELPERS_BY_ALIAS = (
    "import torch\n"
    "from functools import partial as bind\n\n"
    "bwd = torch.autograd.backward\n"
    "make = bind(torch.zeros, requires_grad=False)\n"
    "total = torch.sum\n\n\n"
    "def run_backward(loss):\n"
    "    bwd(loss)\n\n\n"
    "def make_buf(x):\n"
    "    buf = make(4)\n"
    "    buf[0] = x.max()\n"
    "    return buf\n\n\n"
    "def masked_max(x, mask, min_val=-1e7):\n"
    "    return x.masked_fill(mask, min_val).max()\n\n\n"
    "def pool(x, mask):\n"
    "    return masked_max(x, mask) + total(x * x)\n"
)
TRAIN_BY_ALIAS = (
    "import torch\n"
    "from helpers import run_backward, make_buf, pool\n\n\n"
    "def train(model, x, mask):\n"
    "    with torch.autocast('cuda'):\n"
    "        loss = model(x)\n"
    "        run_backward(loss)\n"
    "        return make_buf(x), pool(loss, mask)\n"
)


def test_names_bound_once_and_parameter_defaults_keep_a_file_with_entries(monkeypatch):
    """A file whose hazards come through a name bound once to a function (`bwd =
    torch.autograd.backward`) or a parameter's default (`min_val=-1e7`), with regions from
    another file only: the prefilter must read these bindings as facts/tree.py and
    facts/param_defaults.py do, else the findings a parse gives are lost."""
    files = {"helpers.py": HELPERS_BY_ALIAS, "train.py": TRAIN_BY_ALIAS}
    _parse_forced(monkeypatch)
    forced = lint_project(files, Settings.default())
    monkeypatch.undo()
    codes = {d.code for d in forced["helpers.py"].diagnostics}
    assert {"AMP104", "AMP110"} <= codes, codes
    results = lint_project(files, Settings.default())
    assert {p: _outcome(r) for p, r in results.items()} == {p: _outcome(r) for p, r in forced.items()}
