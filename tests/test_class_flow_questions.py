"""The class flow's call-site questions read each mention's text once (issue 34): counted, not
timed.

A project laid out like facebookresearch/fairseq: `fairseq/modules/transformer_layer.py`'s
layer stores two of its constructor's parameters (`self.embed_dim = embed_dim`, `self.p =
dropout`), and the models build it in their own files (`TransformerEncoderLayer(args.dim,
args.dropout)`). A training script turns the model half, so the half spread asks what each
stored parameter may hold: one question per parameter, each over the same files. What the text
of each mention says (its callee, the slots its arguments fill) is the same for both
questions: it is read once, and the callee's check (site_files.py) is made once per question
that needs it, not once per parameter."""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build, lint_project
from amplint.analysis.project import site_text

SETTINGS = Settings.default()
ROOT = "fairseq/fairseq"

LAYER = """import torch.nn as nn


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim, dropout):
        super().__init__()
        self.embed_dim = embed_dim
        self.p = dropout
        self.fc = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        return nn.functional.dropout(self.fc(x), p=self.p)
"""
MODEL = """import torch.nn as nn

from fairseq.modules.transformer_layer import TransformerEncoderLayer


class {name}Encoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.layers = nn.ModuleList(
            [TransformerEncoderLayer(args.encoder_dim, args.dropout) for _ in range(args.layers)]
        )
        self.last = TransformerEncoderLayer(args.encoder_dim, dropout=args.dropout)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.last(x)
"""
TRAIN = """import torch

from fairseq.models.{lower} import {name}Encoder


def main(args):
    model = {name}Encoder(args)
    model.half()
    return model(torch.zeros(2, args.encoder_dim).cuda())
"""
NAMES = ["Transformer", "Lightconv", "Fconv", "Lstm"]


def _files(models: int):
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/modules/__init__.py": "",
        f"{ROOT}/modules/transformer_layer.py": LAYER,
        f"{ROOT}/models/__init__.py": "",
    }
    for name in NAMES[:models]:
        files[f"{ROOT}/models/{name.lower()}.py"] = MODEL.format(name=name)
    files["fairseq/train.py"] = TRAIN.format(name=NAMES[0], lower=NAMES[0].lower())
    return files


def _count_chains(monkeypatch):
    counted = []
    chain = site_text.CodeText.chain

    def counting(self, position, name):
        counted.append(name)
        return chain(self, position, name)

    monkeypatch.setattr(site_text.CodeText, "chain", counting)
    return counted


def test_each_mention_is_read_once_whatever_the_parameters_asked(monkeypatch):
    counted = _count_chains(monkeypatch)
    files = _files(4)
    project = build(files)
    half = {cls for (_, cls) in project.flow.half_instances()}
    assert half == {"TransformerEncoder", "TransformerEncoderLayer"}
    # two parameters asked (embed_dim, dropout), the same two mentions in each model file
    mentions = sum(files[p].count("TransformerEncoderLayer(") for p in files if "/models/" in p)
    assert mentions == 8
    # each question stops at the first mention that keeps a file (here its first call): that
    # mention is read once, not once per parameter asked
    assert counted.count("TransformerEncoderLayer") == 4
    # the callee (an import) is checked once per file and question: the 4 model files for the
    # layer's constructor (both parameters), train.py for the encoder's
    assert project.flow._site_files.callees_checked == 5


def test_the_half_set_and_the_finding_do_not_depend_on_the_models_asked():
    assert {cls for (_, cls) in build(_files(1)).flow.half_instances()} == \
        {cls for (_, cls) in build(_files(4)).flow.half_instances()}
    found = lint_project(_files(4), SETTINGS)
    codes = sorted((p.rsplit("/", 1)[1], d.code) for p, r in found.items() for d in r.diagnostics if d.code != "AMP130")
    assert all(code != "AMP110" for _, code in codes)  # nothing here is a hazard: no false finding


# fairseq/criterions/fastspeech2_loss.py: a criterion registered by fairseq's own
# `@register_criterion("fastspeech2")` (a function the class flow does not read as a registry)
# casts a value read from its `forward`'s `sample` parameter. The trainers call
# `criterion.forward(model, sample)` on values the text cannot follow.
CRITERION = """import torch

from fairseq.criterions import register_criterion, FairseqCriterion


@register_criterion("fastspeech2")
class FastSpeech2Loss(FairseqCriterion):
    def forward(self, model, sample, reduction="mean"):
        dur = sample["durations"].float()
        dur = dur.half()
        return model(**sample["net_input"]), dur
"""
CRITERIONS = """CRITERION_REGISTRY = {}


def register_criterion(name):
    def register(cls):
        CRITERION_REGISTRY[name] = cls
        return cls
    return register


class FairseqCriterion:
    def forward(self, model, sample):
        raise NotImplementedError
"""
TRAINER = """import torch


class {name}Trainer:
    def __init__(self, criterion, model):
        self.criterion = criterion
        self.model = model

    def train_step(self, sample):
        loss, _ = self.criterion.forward(self.model, sample)
        return loss
"""


def _criterion_files(trainers: int, named: bool = False):
    files = {
        "fairseq/fairseq/__init__.py": "",
        "fairseq/fairseq/criterions/__init__.py": CRITERIONS,
        "fairseq/fairseq/criterions/fastspeech2_loss.py": CRITERION,
    }
    for name in NAMES[:trainers]:
        files[f"fairseq/fairseq/trainers/{name.lower()}_trainer.py"] = TRAINER.format(name=name)
    if named:  # a script that builds the criterion by its name
        files["fairseq/examples/tts.py"] = (
            "from fairseq.criterions.fastspeech2_loss import FastSpeech2Loss\n\n\n"
            "def build():\n    return FastSpeech2Loss()\n"
        )
    return files


def _trainers(paths):
    return sorted(p for p in paths if "/trainers/" in p)


def test_a_method_of_a_class_nothing_names_asks_no_call_site():
    """Only the class statement names FastSpeech2Loss: no value of the class flow holds it, an
    instance of it or of a subclass, so no `x.forward(...)` site can call its `forward`, and the
    trainers' files are not summarised for the question `dur` asks."""
    files = _criterion_files(4)
    project = build(files)
    assert project.flow.half_instances() == {}
    assert _trainers(files) and _trainers(project.parsed) == []


def test_a_class_named_anywhere_keeps_its_method_call_sites():
    files = _criterion_files(4, named=True)
    project = build(files)
    assert project.flow.half_instances() == {}
    assert _trainers(project.parsed) == _trainers(files)


def test_a_registration_decorator_keeps_its_method_call_sites():
    """`@CRITERIONS.register_module()` is a registry the class flow reads: a build may make it."""
    files = _criterion_files(4)
    files["fairseq/fairseq/criterions/fastspeech2_loss.py"] = CRITERION.replace(
        '@register_criterion("fastspeech2")', "@CRITERIONS.register_module()").replace(
        "import register_criterion,", "import CRITERIONS,")
    project = build(files)
    project.flow.half_instances()
    assert _trainers(project.parsed) == _trainers(files)


# huggingface/transformers' generation/configuration_utils.py: `from_model_config` calls
# `cls.from_dict(...)`, so the class flow asks what its `cls` may hold: the call sites of the
# classmethod `from_model_config`. The models call `generation_class.from_model_config(config)`
# with one positional argument, on a value the text cannot follow.
GENERATION_CONFIG = """class GenerationConfig:
    def __init__(self, **kwargs):
        self.max_length = kwargs.pop("max_length", 20)

    @classmethod
    def from_dict(cls, config_dict, **kwargs):
        return cls(**config_dict, **kwargs)

    @classmethod
    def from_model_config(cls, model_config):
        config = cls.from_dict(model_config.to_dict())
        return config.half_precision_copy()
"""
PRETRAINED = """import torch.nn as nn

from .generation.configuration_utils import GenerationConfig


class PreTrainedModel(nn.Module):
    generation_config_class = GenerationConfig

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.generation_config = self.generation_config_class.from_model_config(config)
"""
CONFIG_USER = """def generation_config_{name}(generation_class, model_config):
    return generation_class.from_model_config(model_config)
"""
CLS_EXAMPLE = """from transformers.generation.configuration_utils import GenerationConfig


def main(model_config):
    return GenerationConfig.from_model_config(model_config).half()
"""


def _generation_files(users: int):
    files = {
        f"{ROOT_TF}/__init__.py": "",
        f"{ROOT_TF}/generation/__init__.py": "",
        f"{ROOT_TF}/generation/configuration_utils.py": GENERATION_CONFIG,
        f"{ROOT_TF}/modeling_utils.py": PRETRAINED,
        "transformers/examples/generation_config.py": CLS_EXAMPLE,
    }
    for name in ["bert", "gpt2", "t5", "llama"][:users]:
        files[f"{ROOT_TF}/models/{name}/configuration_{name}.py"] = CONFIG_USER.format(name=name)
    return files


ROOT_TF = "transformers/src/transformers"


def test_cls_of_a_classmethod_is_bound_by_keyword_only():
    """`generation_class.from_model_config(config)` fills position 0, which a call of a classmethod
    (held as `cfunc` or `bound`, `cls` left out) gives to `config_dict`, never to `cls`: the
    config files are not summarised for the question `cls.from_dict(...)` asks."""
    files = _generation_files(4)
    project = build(files)
    assert project.flow.half_instances() == {}
    users = sorted(p for p in files if "/models/" in p)
    assert users and not set(users) & set(project.parsed)
    # a keyword `cls=` could bind it: such a file is read
    files[f"{ROOT_TF}/models/vit/configuration_vit.py"] = CONFIG_USER.format(name="vit").replace(
        "from_model_config(model_config)", "from_model_config(cls=generation_class)")
    project = build(files)
    project.flow.half_instances()
    assert f"{ROOT_TF}/models/vit/configuration_vit.py" in project.parsed
