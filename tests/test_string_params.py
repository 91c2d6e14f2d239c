"""A reflective lookup keyed by a parameter (issue 26, amplint/analysis/project/string_params.py):
`resnet_models.__dict__[arch](...)` inside a module-level helper resolves to what the string
literals every call of the helper passes for `arch` name (facebookresearch/swav's hubconf.py
shape, tests/projects/strings_swav_hub); where one call passes something else, or the helper
escapes as a value, or a call cannot be told apart, the lookup gives every project class and
function of the namespace (namespace_members.py: a sound over-approximation), each cited with the
key value that selects it."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
SWAV = "strings_swav_hub"
HAZARD = ("src/resnet50.py", 18, "AMP110")
LINEAR = ("src/resnet50.py", 38, "AMP110")
FIX = [("x.masked_fill(~valid, -1e9)", "x.masked_fill(~valid, torch.finfo(x.dtype).min)")]


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def messages(files):
    return [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]


def unresolved(files):
    return [(call, why) for _, call, why in build(files).unresolved]


def test_the_literals_of_every_call_site_name_the_constructor():
    # hubconf.resnet50 -> _swav_model("resnet50", ...) -> resnet_models.__dict__["resnet50"] -> ResNet;
    # the Linear head (linear(), which no call names) is never run
    files = load(SWAV)
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "under the autocast region at eval_semisup.py:17" in message
    assert findings(load(SWAV, FIX)) == []


def test_each_call_site_runs_its_own_literal():
    # a call of the helper naming `linear`: the helper's result may be a Linear too (the class
    # flow does not tell call sites apart, as for class-valued parameters)
    files = load(SWAV, [('_swav_model("resnet50w2", pretrained,', '_swav_model("linear", pretrained,')])
    assert findings(files) == [HAZARD, LINEAR]
    # without that call, no literal names linear
    files = load(SWAV, [('    return _swav_model("resnet50w2", pretrained, checkpoint="swav_RN50w2_400ep_pretrain.pth.tar", **kwargs)',
                         '    return None')])
    assert findings(files) == [HAZARD]


def test_a_call_passing_anything_but_a_literal_resolves_nothing():
    extra = "\n\ndef from_name(name, **kwargs):\n    return _swav_model(name, pretrained=False, **kwargs)\n"
    files = load(SWAV)
    files[SWAV + "/hubconf.py"] += extra
    # any name may reach the lookup: every member of the namespace, the Linear head included
    assert findings(files) == [HAZARD, LINEAR]
    assert unresolved(files) == []
    assert all("(when arch is '" in m for m in messages(files))
    # ... unless that caller's own calls all pass a literal (followed a few levels)
    files[SWAV + "/eval_semisup.py"] += "\n\ndef probe():\n    return from_name('resnet50')\n"
    files[SWAV + "/eval_semisup.py"] = files[SWAV + "/eval_semisup.py"].replace(
        "from hubconf import resnet50", "from hubconf import from_name, resnet50")
    assert findings(files) == [HAZARD]
    # a star argument may give the name: not followed
    files = load(SWAV, [('_swav_model("resnet50", pretrained, **kwargs)', '_swav_model(*("resnet50", pretrained), **kwargs)')])
    assert findings(files) == [HAZARD, LINEAR]


def test_a_helper_that_escapes_or_is_renamed_resolves_nothing():
    # passed as a value (a partial, a registry): its calls are out of sight
    files = load(SWAV)
    files[SWAV + "/hubconf.py"] += "\n\nimport functools\n\nresnet50w4 = functools.partial(_swav_model, 'linear')\n"
    assert findings(files) == [HAZARD, LINEAR]  # not the literals: every member
    # imported under another name, called by it: not read as literals either
    files = load(SWAV)
    files[SWAV + "/probe.py"] = "from hubconf import _swav_model as make\n\nmodel = make('linear')\n"
    assert findings(files) == [HAZARD, LINEAR]
    # a method of the same name on an object: its callee cannot be told from the helper
    files = load(SWAV)
    files[SWAV + "/probe.py"] = "def run(builder):\n    return builder._swav_model('linear')\n"
    assert findings(files) == [HAZARD, LINEAR]
    # a function of the same name in another module, called from there: not the helper's call
    files = load(SWAV)
    files[SWAV + "/other.py"] = "def _swav_model(arch):\n    return arch\n\n\nprobe = _swav_model('linear')\n"
    assert findings(files) == [HAZARD]


def test_a_literal_naming_nothing_there_is_unresolved():
    files = load(SWAV, [('_swav_model("resnet50", pretrained,', '_swav_model("resnet18", pretrained,'),
                        ('_swav_model("resnet50w2", pretrained,', '_swav_model("resnet34", pretrained,')])
    assert findings(files) == []
    ((call, why),) = unresolved(files)
    assert "it is looked up by `arch`, whose given values (resnet18, resnet34) name no project class or function there" in why


def test_the_default_is_what_a_call_leaving_the_parameter_out_gives():
    files = load(SWAV, [("def _swav_model(arch, pretrained=True,", "def _swav_model(pretrained=True, arch='resnet50',"),
                        ('_swav_model("resnet50", pretrained, **kwargs)', "_swav_model(pretrained)"),
                        ('_swav_model("resnet50w2", pretrained, checkpoint', "_swav_model(pretrained, arch='linear', checkpoint")])
    assert findings(files) == [HAZARD, LINEAR]
    # a call with **kwargs may give it: not followed
    files[SWAV + "/hubconf.py"] = files[SWAV + "/hubconf.py"].replace("_swav_model(pretrained)", "_swav_model(pretrained, **kwargs)")
    assert findings(files) == [HAZARD, LINEAR]  # every member
    # no default and not given
    files = load(SWAV, [('_swav_model("resnet50", pretrained, **kwargs)', "_swav_model(pretrained=pretrained, **kwargs)")])
    assert findings(files) == [HAZARD, LINEAR]


def test_getattr_on_the_module_by_the_parameter():
    files = load(SWAV, [("resnet_models.__dict__[arch](normalize=True, **kwargs)",
                         "getattr(resnet_models, arch)(normalize=True, **kwargs)")])
    assert findings(files) == [HAZARD]
    # a parameter the helper assigns again before the lookup: not what its callers give
    files = load(SWAV, [("    model = resnet_models.__dict__[arch](normalize=True, **kwargs)",
                         "    arch = arch.lower()\n    model = resnet_models.__dict__[arch](normalize=True, **kwargs)")])
    assert findings(files) == [HAZARD, LINEAR]  # every member
