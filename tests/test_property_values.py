"""Two carriers of the class flow (project/classvalues.py, flowvalues.py / ast_values.py):

- a `@property` (or `functools.cached_property`) read on a project instance holds what the
  property returns, every return it has: `config.norm_class` -> `partial(RMSNorm, ...)`, so
  `config.norm_class(n_embd)` makes an RMSNorm;
- the builtin `dict(k=v, ...)` holds its values, as the literal `{"k": v}` does:
  `nn.ModuleDict(dict(h=nn.ModuleList(...), ln_f=...))` registers what it holds.

The project is laid out like Lightning-AI/litgpt (litgpt/config.py's Config dataclass and its
`norm_class` property picking the norm by `norm_class_name`, litgpt/model.py GPT / Block /
RMSNorm with the `transformer` ModuleDict, litgpt/generate/base.py casting the model to float16
for inference). The float16 cast reaches RMSNorm only through both carriers; before, neither
was followed and the hand-written norm's float16 square went unreported."""

from __future__ import annotations

from types import SimpleNamespace

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
ON = SimpleNamespace(value_flow=True)
NAME = "flow_litgpt_norm_property"
HAZARD = ("litgpt/model.py", 47, "AMP141")
FIX = [("norm_x = x.pow(2).mean(dim=self.dim, keepdim=True)",
        "norm_x = x.float().pow(2).mean(dim=self.dim, keepdim=True)"),
       ("x_normed = x * torch.rsqrt(norm_x + self.eps)",
        "x_normed = (x * torch.rsqrt(norm_x + self.eps)).to(x.dtype)")]
DICT = "            dict(\n"
LITERAL = [(DICT, "            {\n"), ("                wte=", '                "wte": '),
           ("                h=", '                "h": '), ("                ln_f=", '                "ln_f": '),
           ("            )\n        )\n        self.lm_head", "            }\n        )\n        self.lm_head")]


def findings(files, config=None):
    return project_findings(lint_project(files, SETTINGS, config=config))


def test_norm_class_property_and_module_dict_reach_the_half_rmsnorm():
    for config in (None, ON):
        results = lint_project(load(NAME), SETTINGS, config=config)
        assert project_findings(results) == [HAZARD]
        (message,) = [d.message for r in results.values() for d in r.diagnostics]
        assert "GPT(config) at generate/base.py:17 made float16" in message
        assert findings(load(NAME, FIX), config) == []  # the twin


def test_the_property_alone_carries_the_class():
    # a dict display: the property is the only carrier left to follow
    files = load(NAME, LITERAL)
    assert DICT not in files[f"{NAME}/litgpt/model.py"]
    assert findings(files) == [HAZARD]


def test_dict_call_alone_carries_its_values():
    # the norm made directly: `dict(...)` is the only carrier left to follow
    files = load(NAME, [("config.norm_class(config.n_embd", "RMSNorm(config.n_embd")])
    assert findings(files) == [HAZARD]
    # a `dict` the module defines is not the builtin: what it returns is not known
    shadowed = load(NAME, [("config.norm_class(config.n_embd", "RMSNorm(config.n_embd"),
                           ("class GPT(nn.Module):", "def dict(**parts):\n    return parts\n\n\nclass GPT(nn.Module):")])
    assert findings(shadowed) == []


def test_a_property_that_returns_no_project_class_holds_nothing():
    # only torch's norms: nothing of the project is made half through it
    torch_only = load(NAME, [('        if self.norm_class_name == "RMSNorm":\n', "        if False:\n"),
                             ("            return partial(RMSNorm", "            return partial(Unknown")])
    assert findings(torch_only) == []
    # the same method without @property is a bound method: calling it is not making a norm
    plain = load(NAME, [("    @property\n    def norm_class(self):", "    def norm_class(self):")])
    assert findings(plain) == []
