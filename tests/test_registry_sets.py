"""A registry lookup by a key no literal fixes (issue 26, team rule of round 38): the lookup may
make any class registered in the linted tree, so it holds that set, and a finding reached through
it says so and names the key that selects the hazardous class. The project is laid out like
idiap/fast-transformers: `TransformerEncoderBuilder.from_kwargs(attention_type=...)` sets the
builder's attributes by a `setattr` loop, `get()` looks the attention class up with
`AttentionRegistry.spec(self.attention_type)` (a classmethod returning the class and its
parameter names as a tuple), and two attention modules register themselves ("full", "linear");
the script names the attention type on its command line. The fork's FullAttention masks with
-1e9 under the script's float16 autocast. Missed on main (the `cls()` builder, the tuple lookup
and the non-literal key each stopped the flow)."""

from __future__ import annotations

import os

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project

from project_files import load, project_findings  # noqa: E402

SETTINGS = Settings.default()
FT = "registry_set_fast_transformers"
HAZARD = ("fast_transformers/attention/full_attention.py", 19, "AMP110")
FIX = [("-1e9)", "torch.finfo(QK.dtype).min)")]
KEY = ("AttentionRegistry.spec(self.attention_type) at fast_transformers/builders.py:31, one of the 2 "
       "classes registered with `AttentionRegistry.register`, when `self.attention_type` is 'full'")


def lint(files):
    return lint_project(files, SETTINGS)


def findings(files):
    return project_findings(lint(files), skip=("AMP130",))


def messages(files):
    return [d.message for r in lint(files).values() for d in r.diagnostics if d.code != "AMP130"]


def test_every_registered_class_may_run_and_the_finding_names_the_key():
    files = load(FT)
    assert findings(files) == [HAZARD]
    (message,) = messages(files)
    assert KEY in message
    assert findings(load(FT, FIX)) == []


def test_show_regions_names_each_class_of_the_set_and_its_key(tmp_path):
    from click.testing import CliRunner

    from amplint.cli.main import cli

    for path, text in load(FT).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (tmp_path / "pyproject.toml").write_text("")
    old = os.getcwd()
    os.chdir(tmp_path / FT)
    try:
        result = CliRunner().invoke(cli, ["--show-regions", "--no-cache", "."])
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    assert "  reaches FullAttention.forward in fast_transformers/attention/full_attention.py\n" in result.output
    assert "  reaches LinearAttention.forward in fast_transformers/attention/linear_attention.py\n" in result.output
    # each class of the set, with the key's value that selects it
    assert ("  self.inner_attention at fast_transformers/transformers.py:24 -> FullAttention.forward in "
            "fast_transformers/attention/full_attention.py (self.inner_attention <- attention_class(...) at "
            "fast_transformers/builders.py:34 (" + KEY + ") -> FullAttention in ") in result.output
    assert "when `self.attention_type` is 'linear') -> LinearAttention in" in result.output


def test_a_class_registered_nowhere_in_the_tree_is_not_in_the_set():
    # FullAttention is no longer registered: only LinearAttention can be looked up
    files = load(FT, [('AttentionRegistry.register("full", FullAttention, ["softmax_temp", "attention_dropout"])\n',
                       "")])
    assert findings(files) == []


def test_a_literal_key_narrows_the_set():
    # the builder is asked for "linear" by a literal the lookup sees: FullAttention never runs
    files = load(FT, [("AttentionRegistry.spec(self.attention_type)", 'AttentionRegistry.spec("linear")')])
    assert findings(files) == []
    files = load(FT, [("AttentionRegistry.spec(self.attention_type)", 'AttentionRegistry.spec("full")')])
    assert findings(files) == [HAZARD]
    (message,) = messages(files)
    assert "AttentionRegistry.spec('full') at fast_transformers/builders.py:31" in message
    assert "one of the" not in message


def test_a_lookup_that_does_not_return_the_stored_class_is_not_a_registry():
    # `spec` returns something else than the items `register` stored under the key
    files = load(FT, [("return cls._classes[key], cls._parameters[key]", "return cls.default, cls._parameters[key]")])
    assert findings(files) == []


def test_a_builder_that_is_not_an_instance_of_its_class_is_not_followed():
    # `builder = cls(); ...; return builder` makes a TransformerEncoderBuilder; another object does not
    files = load(FT, [("        builder = cls()\n", "        builder = object()\n")])
    assert findings(files) == []
