"""`protocol_keys` (scaler_quiet.py) answers without parsing a text none of whose calls can keep
a function: its code (comments and plain strings blanked) names no clip, `step`, `backward`,
`scale`/`unscale_` or framework verb, and nothing in it speaks of a scaler. Such a text is a
callee file only through a word in prose ("backward compatible", "clip" in a docstring); on the
mixed tree 848 of 2,172 callee texts, the value calls' EventMethods reading most of them
(`update`, `state_dict`, `to`). Start parsed every one with `ast`.

The project, written here, is shaped like huggingface/transformers: configuration_utils.py's
`PretrainedConfig.update` (its docstring says "backward compatible"), and trainer.py, which
scales the loss, calls `self.args.update(...)` on a value and clips before unscaling: AMP120.
Twin: the trainer unscales before the clip: silent.
"""

from __future__ import annotations

import random

from project_files import code_findings

CONFIG = '''class PretrainedConfig:
    """Base class of the configurations; `update` stays backward compatible with old keys."""

    def __init__(self, **kwargs):
        self.values = dict(kwargs)

    def update(self, config_dict):
        # clip nothing here: only copy the values
        for key, value in config_dict.items():
            self.values[key] = value
'''

TRAINER = """import torch

from hf.configuration_utils import PretrainedConfig


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def training_step(self, loss):
        config = PretrainedConfig(lr=1.0)
        self.scaler.scale(loss).backward()
        config.update({"lr": 0.5})
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
"""

CONFIG_PATH = "hf/configuration_utils.py"
SCALED = '        self.scaler.scale(loss).backward()\n'
UNSCALED = SCALED + "        self.scaler.unscale_(self.optimizer)\n"


def _files(trainer=TRAINER):
    return {CONFIG_PATH: CONFIG, "hf/trainer.py": trainer, "hf/__init__.py": ""}


def _counting_parses(monkeypatch):
    from amplint.analysis.project import scaler_quiet

    parsed = []
    real = scaler_quiet.python_tree
    monkeypatch.setattr(scaler_quiet, "python_tree", lambda text: parsed.append(text) or real(text))
    return parsed


def test_a_callee_with_prose_words_only_is_not_parsed_for_its_keys(monkeypatch):
    from amplint.analysis.project.scaler_quiet import protocol_keys

    parsed = _counting_parses(monkeypatch)
    assert protocol_keys(CONFIG) == frozenset()
    assert parsed == []  # start: parsed
    # a real call keeps its function, and the text is parsed as before
    stepping = CONFIG + "\n    def apply(self, optimizer):\n        optimizer.step()\n"
    assert protocol_keys(stepping) == frozenset({"PretrainedConfig.apply"})
    assert parsed == [stepping]
    # a scaler spoken of (even in a comment) lets `update` keep one: parsed
    scaled = "# GradScaler\n" + CONFIG.replace("self.values[key] = value", "self.s.update()")
    assert protocol_keys(scaled) == frozenset({"PretrainedConfig.update"})


def test_the_pass_reads_the_config_unparsed_and_finds_the_same(monkeypatch):
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import build
    from amplint.analysis.project.scaler_resolution import scaler_entries, text_keys_of, text_may_hold
    from amplint.analysis.project.scaler_summaries import local_summaries

    files = _files()
    parsed = _counting_parses(monkeypatch)

    def entries(keys_of):
        return scaler_entries(build(files, Settings.default()), sorted(files),
                              lambda wanted, force: local_summaries(files, wanted, force),
                              may_hold=text_may_hold(files), keys_of=keys_of)

    with_keys = entries(text_keys_of(files))
    assert CONFIG not in parsed  # start: the keys' parse of the config
    assert with_keys == entries(None)
    assert code_findings(files, "AMP120")[0] == [("trainer.py", 16, "AMP120")]
    assert code_findings(_files(TRAINER.replace(SCALED, UNSCALED)), "AMP120")[0] == []


def test_unparsed_answers_are_the_parsed_ones_on_generated_texts(monkeypatch):
    """On generated texts, `protocol_keys` equals its parsed answer (the test turned off) for
    every text `ast` parses."""
    from amplint.analysis.project import scaler_quiet

    pieces = ["def f(x):\n", "class C:\n", "    def step(self):\n", "    x.step()\n", "    x.steps()\n",
              "    # backward\n", '    """clip_grad_norm_"""\n', "    y.backward()\n", "    o.update()\n",
              "    s.scale(l)\n", "    'caler'\n", "    f'{a.step()}'\n", "    pass\n", "    z = step\n",
              "from torch.nn.utils import clip_grad_norm_ as c\n", "    c(p)\n", "    u.unscale_(o)\n"]
    rng = random.Random(26)
    compared = unparsed = 0
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        try:
            compile(text, "generated.py", "exec", dont_inherit=True)
        except SyntaxError:
            continue
        compared += 1
        quick = scaler_quiet.protocol_keys(text)
        unparsed += scaler_quiet._no_event_call(text)
        with monkeypatch.context() as patched:
            patched.setattr(scaler_quiet, "_no_event_call", lambda text: False)
            assert quick == scaler_quiet.protocol_keys(text), repr(text)
    assert compared > 300 and unparsed > 50
