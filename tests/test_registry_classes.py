"""Registry classes keyed by strings (issue 26, amplint/analysis/project/registry_classes.py and
string_sources.py): a class whose classmethods `register(name)` and `by_name(name)` store and
find subclasses by name, as allenai/allennlp's `Registrable`. The test project is laid out like
allennlp-models' SimpleTagger with a registrable Seq2SeqEncoder: train.py builds the encoder by
`Seq2SeqEncoder.by_name(params.pop("type"))` from a dict-literal config, SimpleTagger holds it,
and the trainer (another file) runs the model under autocast. Only the class registered under
the configured name is followed, only when every name reaching the lookup is a literal of the
project; otherwise the call is unresolved and --show-regions says why. Missed on main."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
TAGGER = "strings_allennlp_registrable"
HAZARD = ("tagger/modules/self_attention_encoder.py", 23, "AMP110")
FIX = [("-1e9", "torch.finfo(scores.dtype).min")]
DECORATOR = '@Seq2SeqEncoder.register("self_attention")\n'
ENCODER = TAGGER + "/tagger/modules/self_attention_encoder.py"


def findings(files):
    return project_findings(lint_project(files, SETTINGS), skip=("AMP130",))


def unresolved(files):
    return [(call, why) for _, call, why in build(files).unresolved]


# a region that calls the looked-up encoder directly: --show-regions names its calls
PROBE = """

def encode(tokens, mask):
    params = dict(CONFIG["model"]["encoder"])
    encoder = Seq2SeqEncoder.by_name(params.pop("type"))(**params)
    with torch.autocast("cuda"):
        return encoder(tokens, mask)
"""


def probe_why(files):
    files[TAGGER + "/train.py"] += PROBE
    return [why for call, why in unresolved(files) if call.startswith("encoder at train.py")]


def test_the_class_registered_under_the_configured_name_is_followed():
    files = load(TAGGER)
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "Seq2SeqEncoder.by_name('self_attention') at train.py:12" in message
    assert findings(load(TAGGER, FIX)) == []
    assert probe_why(load(TAGGER)) == []


def test_another_registered_name_runs_another_class():
    # the config names the pass-through encoder: the self-attention one is registered but not built
    files = load(TAGGER, [('"type": "self_attention"', '"type": "pass_through"')])
    assert findings(files) == []
    assert unresolved(files) == []


def test_registration_by_a_call():
    # `Seq2SeqEncoder.register("self_attention")(SelfAttentionEncoder)` after the class
    files = load(TAGGER, [(DECORATOR, "")])
    files[ENCODER] += '\n\nSeq2SeqEncoder.register("self_attention")(SelfAttentionEncoder)\n'
    assert findings(files) == [(HAZARD[0], HAZARD[1] - 1, HAZARD[2])]


def test_the_name_as_a_parameter_every_call_site_gives_a_literal():
    files = load(TAGGER, [
        ("def build_model(vocab_size, num_tags):", "def build_model(vocab_size, num_tags, encoder_type):"),
        ('Seq2SeqEncoder.by_name(encoder_params.pop("type"))', "Seq2SeqEncoder.by_name(encoder_type)"),
        ("build_model(30000, 17)", 'build_model(30000, 17, "self_attention")'),
    ])
    assert findings(files) == [HAZARD]
    files = load(TAGGER, [
        ("def build_model(vocab_size, num_tags):", "def build_model(vocab_size, num_tags, encoder_type):"),
        ('Seq2SeqEncoder.by_name(encoder_params.pop("type"))', "Seq2SeqEncoder.by_name(encoder_type)"),
        ("build_model(30000, 17)", "build_model(30000, 17, input())"),
    ])
    # a name no literal fixes: every registered class may run (issue 26's set rule), and the
    # finding names the key that selects the hazardous one
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert ("one of the 2 classes registered with `Seq2SeqEncoder.register`, when `encoder_type` is "
            "'self_attention'") in message


def test_a_name_not_known_exactly_stands_for_every_registered_class():
    # the config's name is overwritten from the environment: which class runs, no file decides,
    # so the lookup holds the set of registered classes, each cited with the key's value
    files = load(TAGGER, [("    model = build_model(", '    CONFIG["model"]["encoder"]["type"] = os.environ["ENC"]\n'
                           "    model = build_model(")])
    assert findings(files) == [HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "when `encoder_params.pop('type')` is 'self_attention'" in message
    assert probe_why(files) == []
    assert findings(load(TAGGER, FIX)) == []
    # more registered classes than a registry build follows: unresolved, and --show-regions says why
    many = "".join(f'\n\n@Seq2SeqEncoder.register("extra{i}")\nclass Extra{i}(Seq2SeqEncoder):\n    pass\n'
                   for i in range(8))
    files[ENCODER] += many
    assert findings(files) == []
    whys = [why for _, why in unresolved(files)]
    assert any("by a name whose values are not all literals of the project" in why for why in whys)


def test_a_name_nothing_registers_is_unresolved():
    files = load(TAGGER, [('"type": "self_attention"', '"type": "lstm"')])
    assert findings(files) == []
    (why,) = probe_why(files)
    assert "the names lstm given to `Seq2SeqEncoder.by_name` have no class registered" in why


def test_only_a_registry_shaped_class_is_read_as_one():
    # a `by_name` that does not return what `register` stored is an ordinary classmethod
    files = load(TAGGER, [("return Registrable._registry[cls][name]", "return cls.list_available()")])
    assert findings(files) == []
    # a registration through another registry class with the same method names does not count
    files = load(TAGGER, [(DECORATOR, '@OtherEncoder.register("self_attention")\n')])
    files[ENCODER] = files[ENCODER].replace(
        "from tagger.modules.seq2seq_encoder import Seq2SeqEncoder\n",
        "from tagger.modules.seq2seq_encoder import Seq2SeqEncoder\n\n\n"
        "class OtherEncoder(Seq2SeqEncoder):\n    pass\n")
    assert findings(files) == []


# -- a register/get function pair (yang-song/score_sde_pytorch's models/utils.py) ----------------
# models/utils.py: `@register_model(name=...)` files a class in the module-level `_MODELS`,
# `get_model(name)` returns `_MODELS[name]`; create_model reads the name from the
# ml_collections config (`config.model.name = "ncsnpp"` in configs/default_config.py); the
# region is in losses.py, the model built in run_lib.py

SDE = "strings_score_sde_registry"
SDE_HAZARD = ("models/ncsnpp.py", 17, "AMP110")
SDE_FIX = [("-1e9", "torch.finfo(w_.dtype).min")]
SDE_CONFIG = SDE + "/configs/default_config.py"


def test_a_register_function_and_its_getter_follow_the_configured_name():
    assert findings(load(SDE)) == [SDE_HAZARD]
    assert findings(load(SDE, SDE_FIX)) == []
    # the config names the other registered model
    assert findings(load(SDE, [('config.model.name = "ncsnpp"', 'config.model.name = "ddpm"')])) == []
    # registered by a call after the class, the name given by position
    files = load(SDE, [('@utils.register_model(name="ncsnpp")\n', "")])
    files[SDE + "/models/ncsnpp.py"] += '\n\nutils.register_model("ncsnpp")(NCSNpp)\n'
    assert findings(files) == [SDE_HAZARD]


def test_configs_naming_several_registered_models_give_their_set():
    # two configs name two registered models: both may run; the finding says through which key
    files = load(SDE)
    files[SDE + "/configs/ddpm_config.py"] = files[SDE_CONFIG].replace('"ncsnpp"', '"ddpm"')
    assert findings(files) == [SDE_HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert ("get_model(model_name) at models/utils.py:22, one of the 2 classes the configs name of those "
            "registered with `register_model`, when `model_name` is 'ncsnpp'") in message
    assert unresolved(files) == []
    fixed = load(SDE, SDE_FIX)
    fixed[SDE + "/configs/ddpm_config.py"] = fixed[SDE_CONFIG].replace('"ncsnpp"', '"ddpm"')
    assert findings(fixed) == []
    files = load(SDE, [('config.model.name = "ncsnpp"', 'config.model.name = "ncsnpp_deep"')])
    ((call, why),) = unresolved(files)
    assert "the names ncsnpp_deep given to `get_model` have no class registered with `register_model`" in why


def test_a_getter_that_is_not_the_registry_is_not_followed():
    # a getter returning another dict than the one the decorator fills
    files = load(SDE, [("    return _MODELS[name]", "    return _DEFAULTS[name]"),
                       ("_MODELS = {}", "_MODELS = {}\n_DEFAULTS = {}")])
    assert findings(files) == []


# -- globals()[name] / vars(module)[name] (a kuangliu/pytorch-cifar fork: main.py picks the net
# by `--model` among the names `from models import *` brings) ---------------------------------

CIFAR = "strings_cifar_globals"
CIFAR_HAZARD = ("models/resnet.py", 33, "AMP110")
CIFAR_FIX = [("-1e9", "torch.finfo(scores.dtype).min")]


def test_globals_of_the_script_by_the_argparse_default():
    assert findings(load(CIFAR)) == [CIFAR_HAZARD]
    assert findings(load(CIFAR, CIFAR_FIX)) == []
    # the default names the other net: `--model ResNet18` may still be given, so both are run
    files = load(CIFAR, [('default="ResNet18"', 'default="VGG11"')])
    assert findings(files) == [CIFAR_HAZARD]
    (message,) = [d.message for r in lint_project(files, SETTINGS).values() for d in r.diagnostics]
    assert "(when args.model is 'ResNet18', 1 of the" in message
    # ... unless `choices=` rules it out
    assert findings(load(CIFAR, [('default="ResNet18", type=str', 'default="VGG11", choices=["VGG11"], type=str')])) == []
    # imported by name rather than by a star
    assert findings(load(CIFAR, [("from models import *", "from models import ResNet18, VGG11")])) == [CIFAR_HAZARD]


def test_vars_of_a_module_by_the_argparse_default():
    files = load(CIFAR, [("from models import *", "import models"),
                         ("globals()[args.model]", "vars(models)[args.model]")])
    assert findings(files) == [CIFAR_HAZARD]


def test_globals_by_a_name_nothing_gives_is_every_global():
    files = load(CIFAR, [('parser.add_argument("--model", default="ResNet18", type=str)',
                          'parser.add_argument("--model", type=str)')])
    assert findings(files) == [CIFAR_HAZARD]
    assert unresolved(files) == []
    # a `globals` of the script's own is not the builtin
    files = load(CIFAR, [("device = \"cuda\"\n", "device = \"cuda\"\nglobals = dict\n")])
    assert findings(files) == []


def test_only_a_registry_shaped_text_is_parsed(monkeypatch):
    # issue 34: the lookups by name parse a file only where its text defines a register
    # function and returns an item (`return _MODELS[name]`); the score_sde project with a getter
    # that returns something else parses no file for them
    from amplint.analysis.project import registry_classes

    shapes = []
    real = registry_classes._shape
    monkeypatch.setattr(registry_classes, "_shape", lambda tree, key: shapes.append(key) or real(tree, key))
    findings(load(SDE))
    assert sorted(shapes) == ["create_model", "get_model"]  # the functions of models/utils.py called
    shapes.clear()
    files = load(SDE, [("    return _MODELS[name]", "    return _MODELS.get(name)")])
    assert findings(files) == []
    assert shapes == []
