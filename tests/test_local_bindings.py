"""Python's plain binding rules in the per-file facts (issue 26): a name bound once, straight in
its scope's body, to an import's attribute (or a `partial` of one) means that function at its
calls; anything else about the name is unknown. A parameter's default is its value where every
call of the file leaves it out; a helper given the scaler composes its unscale into the caller."""


import libcst as cst
import pytest

from amplint.analysis.facts import FileFacts
from amplint.analysis.engine import Settings
from amplint.analysis.facts.names import through_partial
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402


def _resolved(source: str, name: str = "f"):
    """What the last call `name(...)` of `source` resolves to, and whether through a partial."""
    facts = FileFacts(cst.parse_module(source))
    sites = [(q, s) for q, s in facts.qualified_calls if s.dotted == (name,)]
    qualified, site = sites[-1]
    return qualified, through_partial(site.dotted, site.frame)


BCE = "torch.nn.functional.binary_cross_entropy"
HEAD = "import functools\nimport torch\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("body", [
    "def g(x):\n    f = F.binary_cross_entropy\n    return f(x)\n",
    "f = F.binary_cross_entropy\ndef g(x):\n    return f(x)\n",
    "f = F.binary_cross_entropy\nh = f\ndef g(x):\n    return h(x)\nf(x)\n",
])
def test_bound_once_resolves(body):
    assert _resolved(HEAD + body) == (BCE, False)


def test_partial_with_plain_keywords_resolves_and_is_marked():
    src = HEAD + "def g(p):\n    f = functools.partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)\n    f(p)\n"
    assert _resolved(src) == ("torch.nn.utils.clip_grad_norm_", True)


@pytest.mark.parametrize("body", [
    # bound twice / in a branch / in a loop / in a try
    "def g(x):\n    f = F.binary_cross_entropy\n    f = F.mse_loss\n    return f(x)\n",
    "def g(x, c):\n    if c:\n        f = F.binary_cross_entropy\n    return f(x)\n",
    "def g(x, fs):\n    for _ in fs:\n        f = F.binary_cross_entropy\n    return f(x)\n",
    "def g(x):\n    try:\n        f = F.binary_cross_entropy\n    except Exception:\n        pass\n    return f(x)\n",
    # a parameter of the same name, rebound by `global`, an augmented assignment, a walrus
    "def g(f=F.mse_loss):\n    f = F.binary_cross_entropy\n    return f(x)\n",
    "f = F.binary_cross_entropy\ndef h():\n    global f\n    f = F.mse_loss\ndef g(x):\n    return f(x)\n",
    "f = F.binary_cross_entropy\nf += 1\nf(x)\n",
    "f = F.binary_cross_entropy\n(f := F.mse_loss)\nf(x)\n",
    # shadowed by a comprehension or lambda name anywhere in the file
    "f = F.binary_cross_entropy\nys = [f(x) for f in fs]\nf(x)\n",
    "f = F.binary_cross_entropy\nk = lambda f: f(x)\nf(x)\n",
    # with a body (may be skipped by an exception the manager swallows) and del
    "def g(x):\n    with ctx:\n        f = F.binary_cross_entropy\n    return f(x)\n",
    "f = F.binary_cross_entropy\ndel f\nf(x)\n",
    # a partial holding keywords rules read, of a keyword reader, or positional arguments
    "f = functools.partial(torch.zeros, dtype=torch.float16)\nf(3)\n",
    "f = functools.partial(torch.autocast, device_type='cuda')\nf()\n",
    "f = functools.partial(torch.nn.functional.binary_cross_entropy, p)\nf(y)\n",
    # not a partial: a call's result is not the function
    "f = F.binary_cross_entropy(a, b)\nf(x)\n",
])
def test_unknown_stays_unknown(body):
    qualified, _ = _resolved(HEAD + body)
    assert qualified is None


def _default(source: str, param: str = "v"):
    """The default ParamDefaults gives for `param` of the function `f` of `source` (as code)."""
    module = cst.parse_module(source)
    facts = FileFacts(module)
    frame = next(fr for fr in facts.tree.frames if fr.kind == "function" and fr.name == "f")
    value = facts.param_defaults.default(param, frame)
    return None if value is None else module.code_for_node(value)


@pytest.mark.parametrize("calls", [
    "f(1)\n",
    "f(1)\nf(2, w=3)\n",
    "def g():\n    return f(a=1)\n",
])
def test_default_where_no_call_passes_it(calls):
    assert _default("def f(a, v=-1e7, *, w=0):\n    return v\n" + calls) == "-1e7"


@pytest.mark.parametrize("source", [
    "def f(a, v=-1e7):\n    return v\nf(1, 2)\n",  # by position
    "def f(a, v=-1e7):\n    return v\nf(1, v=2)\n",  # by keyword
    "def f(a, v=-1e7):\n    return v\nf(*xs)\n",  # a star argument may hold it
    "def f(a, v=-1e7):\n    return v\nf(1, **kw)\n",
    "def f(a, v=-1e7):\n    return v\n",  # no call in the file: callers are elsewhere
    "def f(a, v=-1e7):\n    return v\nf(1)\nhooks.append(f)\n",  # passed on as a value
    "def f(a, v=-1e7):\n    v = v * 2\n    return v\nf(1)\n",  # rebound in the body
    "@wrap\ndef f(a, v=-1e7):\n    return v\nf(1)\n",  # a decorator may call it otherwise
    "def f(a, v=-1e7):\n    return v\ndef f(a, v=0):\n    return v\nf(1)\n",  # defined twice
    "class C:\n    def f(self, v=-1e7):\n        return v\nC().f()\n",  # a method: calls unknown
])
def test_default_unknown(source):
    assert _default(source) is None


# -- the same constructs in projects laid out like the repositories of blind set D ------------------


def _findings(files):
    return project_findings(lint_project(files, Settings.default()), skip=("AMP130",))


def test_allennlp_default_fill_value():
    # allenai/allennlp: an encoder's `masked_max(..., min_val=-1e7)` called without min_val under
    # the trainer's region. nn/util.py's copy is called only from another file: unknown, silent.
    name = "local_allennlp_masked_max"
    assert _findings(load(name)) == [
        ("allennlp/modules/seq2vec_encoders/max_pool_encoder.py", 5, "AMP110")]
    assert _findings(load(name, [("-1e7)", "-1e4)")])) == []
    # a call that passes the value: the default is not what runs
    assert _findings(load(name, [("dim=1)", "dim=1, min_val=-1e4)")])) == []


def test_mingpt_second_unscale_in_a_helper_given_the_scaler():
    # karpathy/minGPT trainer.py: the gradient-clip helper receives the scaler and unscales again
    name = "local_mingpt_unscale_helper"
    assert _findings(load(name)) == [("mingpt/trainer.py", 23, "AMP123")]
    assert _findings(load(name, [("            self.scaler.unscale_(self.optimizer)\n", "")])) == []


def test_tacotron2_clip_through_a_partial():
    # NVIDIA/tacotron2 train.py: the clip is a partial of clip_grad_norm_ bound once
    name = "local_tacotron2_clip_partial"
    assert _findings(load(name)) == [("train.py", 20, "AMP120")]
    fixed = [("        grad_norm = clip_grad", "        scaler.unscale_(optimizer)\n        grad_norm = clip_grad")]
    assert _findings(load(name, fixed)) == []


def test_default_unknown_where_another_file_calls_under_a_region():
    # nn/util.py calls its masked_max without min_val, but the encoder (another file) calls it
    # under the trainer's region with a value float16 holds: that call's argument wins
    name = "local_allennlp_masked_max"
    files = load(name, [
        ("from allennlp.modules.seq2vec_encoders.max_pool_encoder import MaxPoolEncoder",
         "from allennlp.modules.seq2vec_encoders.cnn_encoder import CnnEncoder as MaxPoolEncoder"),
        ("MaxPoolEncoder(embedding_dim)", "MaxPoolEncoder(embedding_dim, embedding_dim)"),
        ("mask.unsqueeze(1), dim=2)", "mask.unsqueeze(1), dim=2, min_val=-1e4)"),
    ])
    assert _findings(files) == []
