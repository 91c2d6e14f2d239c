"""A project namespace looked up by a name that no literal decides (issue 26,
amplint/analysis/project/namespace_members.py): `getattr(esm.pretrained, args.model_name)()`
holds every project class and function the namespace gives, narrowed only by what the code
filters (the option's `choices=`, members a call with no arguments cannot call); a finding
reached through it names the key value that selects its model. The project is laid out like
facebookresearch/esm (scripts/extract.py, esm/pretrained.py's zero-argument factories) in a
fork whose extract.py adds --fp16; missed on main, where literal-only resolution declines a
positional option with neither `default=` nor `choices=`. Also an `importlib.import_module` of a
literal prefix and a name (junyanz/pytorch-CycleGAN-and-pix2pix's find_model_using_name:
`"models." + model_name + "_model"`, then a scan of the module's `__dict__`): every project
module that fits, and every member of it."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
ESM = "namespace_esm_pretrained"
HAZARD = ("esm/model.py", 29, "AMP110")
FIX = [("-1e9)", "torch.finfo(scores.dtype).min)")]
OPTION = 'parser.add_argument("model_name", type=str,'


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def messages(files):
    return [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]


def test_every_member_of_the_namespace_is_followed():
    files = load(ESM)
    assert findings(files) == [HAZARD]
    (message,) = messages(files)
    assert "model <- ...() at scripts/extract.py:19 (when args.model_name is 'esm2_t6_8M_UR50D', 1 of the 7 names of esm.pretrained) -> ESM2" in message
    assert findings(load(ESM, FIX)) == []


def test_choices_narrow_the_members():
    # only the ESM-1 factory may be given: ESM2 is never built
    assert findings(load(ESM, [(OPTION, OPTION + ' choices=["esm1_t6_43M_UR50S"],')])) == []
    files = load(ESM, [(OPTION, OPTION + ' choices=["esm1_t6_43M_UR50S", "esm2_t33_650M_UR50D"],')])
    assert findings(files) == [HAZARD]
    assert "(when args.model_name is 'esm2_t33_650M_UR50D', 1 of the 2 names" in messages(files)[0]


def test_a_member_a_call_without_arguments_cannot_call_gives_nothing():
    # the loaders take a model name: `getattr(esm.pretrained, name)()` never runs them, so with
    # the ESM2 factories gone only the ESM2 class itself (imported by pretrained.py) selects it
    files = load(ESM, [("def esm2_t6_8M_UR50D():", "def _esm2_t6(name):"),
                       ("def esm2_t33_650M_UR50D():", "def _esm2_t33(name):")])
    assert findings(files) == [HAZARD]
    (message,) = messages(files)
    assert "(when args.model_name is 'ESM2'," in message
    assert "load_model_and_alphabet" not in message and "_esm2_t" not in message
    # and without the imported class either, nothing builds ESM2
    files = load(ESM, [("def esm2_t6_8M_UR50D():", "def _esm2_t6(name):"),
                       ("def esm2_t33_650M_UR50D():", "def _esm2_t33(name):"),
                       ("from .model import ESM1, ESM2\n\n\ndef load", "from .model import ESM1\nfrom . import model as _m\n\n\ndef load"),
                       ("ESM1 if model_name.startswith(\"esm1\") else ESM2", "_m.ESM2"),
                       ("model = ESM2(num_layers=6", "model = _m.ESM2(num_layers=6"),
                       ("model = ESM2(num_layers=33", "model = _m.ESM2(num_layers=33")])
    assert findings(files) == []


def test_too_many_members_are_named_not_followed():
    from amplint.analysis.project.namespace_members import MAX_MEMBERS

    files = load(ESM)
    files[ESM + "/esm/pretrained.py"] += "".join(
        f"\n\ndef extra_{i}():\n    return ESM1(), 'x'\n" for i in range(MAX_MEMBERS))
    assert findings(files) == []
    ((_, call, why),) = build(files).unresolved
    assert call == "model at scripts/extract.py:24"
    assert f"(more than {MAX_MEMBERS} project classes and functions)" in why


def test_show_regions_names_the_key(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from amplint.cli.main import cli

    for name, text in load(ESM).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    monkeypatch.chdir(tmp_path / ESM)
    result = CliRunner().invoke(cli, ["--show-regions", "--no-cache", "."])
    assert result.exit_code == 0, result.output
    assert ("model at scripts/extract.py:24 -> ESM2.forward in esm/model.py (model <- ...() at scripts/extract.py:19 "
            "(when args.model_name is 'esm2_t6_8M_UR50D', 1 of the 7 names of esm.pretrained) -> ESM2 in esm/model.py)"
            ) in result.output


# -- importlib of a literal prefix + a name, then a scan of the module's __dict__ (pix2pix) -----

PIX = "namespace_pix2pix_importlib"
PIX_HAZARD = ("models/networks.py", 20, "AMP102")
PIX_FIX = [("self.loss = nn.BCELoss()", "self.loss = nn.BCEWithLogitsLoss()")]


def test_every_module_the_name_may_import_is_scanned():
    # `--model` defaults to cycle_gan, but "pix2pix" may be given: models/pix2pix_model.py fits
    # "models." + name + "_model", and its Pix2PixModel runs GANLoss's BCELoss under autocast
    files = load(PIX)
    assert findings(files) == [PIX_HAZARD]
    (message,) = messages(files)
    assert "only when model_name is 'pix2pix' and the scan takes 'Pix2PixModel', 1 of the 2 names of models.pix2pix_model" in message
    assert findings(load(PIX, PIX_FIX)) == []


def test_a_module_that_does_not_fit_the_name_is_not_imported():
    # renamed so that "models." + name + "_model" cannot name it
    files = {k.replace("pix2pix_model.py", "pix2pix_net.py"): v for k, v in load(PIX).items()}
    assert findings(files) == []
    # a name with no literal part may import anything: nothing is followed
    files = load(PIX, [('model_filename = "models." + model_name + "_model"', "model_filename = model_name")])
    assert findings(files) == []
    # a scan of something other than a module's namespace: nothing either
    files = load(PIX, [("modellib.__dict__.items()", "REGISTRY.items()"),
                       ("def find_model_using_name", "REGISTRY = {}\n\n\ndef find_model_using_name")])
    assert findings(files) == []


def test_a_dict_of_factories_looked_up_with_get():
    # `MODELS.get(name)()` holds every value of the dict display, as `MODELS[name]()` does
    table = '\n\nMODELS = {"esm1": esm1_t6_43M_UR50S, "esm2": esm2_t6_8M_UR50D}\n'
    lookup = [("getattr(esm.pretrained, args.model_name)()", "esm.pretrained.MODELS.get(args.model_name)()")]
    files = load(ESM, lookup)
    files[ESM + "/esm/pretrained.py"] += table
    assert findings(files) == [HAZARD]
    files = load(ESM, lookup)
    files[ESM + "/esm/pretrained.py"] += table.replace(', "esm2": esm2_t6_8M_UR50D', "")
    assert findings(files) == []


def test_members_the_call_arguments_do_not_fit_give_nothing():
    # with `num_layers=6` the zero-argument factories raise TypeError: only the classes, whose
    # constructors take it, are built (ESM2 by the key 'ESM2')
    files = load(ESM, [("getattr(esm.pretrained, args.model_name)()", "getattr(esm.pretrained, args.model_name)(num_layers=6)")])
    assert findings(files) == [HAZARD]
    assert "(when args.model_name is 'ESM2', 1 of the 7 names of esm.pretrained)" in messages(files)[0]
    # a keyword no member takes, or too many positional arguments: nothing is built
    files = load(ESM, [("getattr(esm.pretrained, args.model_name)()", "getattr(esm.pretrained, args.model_name)(depth=6)")])
    assert findings(files) == []
    files = load(ESM, [("getattr(esm.pretrained, args.model_name)()", "getattr(esm.pretrained, args.model_name)(6, 320, 1)")])
    assert findings(files) == []
    # a star argument may fit anything: every member
    files = load(ESM, [("getattr(esm.pretrained, args.model_name)()", "getattr(esm.pretrained, args.model_name)(**args.extra)")])
    assert findings(files) == [HAZARD]
