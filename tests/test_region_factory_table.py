"""An opener factory of another file that returns an entry of a module-level table of autocast
partials (facts/module_tables.py read by facts/opener_factories.py; the project pass's text and
`ast` tests, project/context_prefilters.py, let such a file through).

tests/projects/ctxtable_llmfoundry is laid out like mosaicml/llm-foundry (scripts/train/train.py
main(cfg), llmfoundry/utils/builders.py build_optimizer over a name->class dict,
llmfoundry/models/mpt.py MPTForCausalLM with its loss) in a fork without Composer: the Trainer's
precision='amp_bf16' became `build_precision_context(cfg["precision"])`, a lookup in
`_PRECISION_CONTEXTS` whose only entry is `partial(torch.autocast, "cuda", dtype=torch.bfloat16)`;
train.py trains under `with precision_ctx():` with an enabled GradScaler, useless under bfloat16
(AMP124). The twins: the scaler disabled; a table that also holds a float16 entry (the dtype is
not known); a table the file changes later.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

NAME = "ctxtable_llmfoundry"
TRAIN = "scripts/train/train.py"
BUILDERS = "llmfoundry/utils/builders.py"
ENTRY = '    "amp_bf16": partial(torch.autocast, "cuda", dtype=torch.bfloat16),\n'


def amp124(*edits):
    return code_findings(load(NAME, edits), "AMP124", Settings.default())[0]


def test_a_scaler_under_a_bfloat16_partial_from_a_table_of_another_file_is_reported_its_twin_is_not():
    assert amp124() == [(TRAIN, 15, "AMP124")]
    assert amp124(('GradScaler("cuda")', 'GradScaler("cuda", enabled=False)')) == []


def test_a_table_with_a_float16_entry_or_changed_later_is_not_read_as_bfloat16():
    assert amp124() == [(TRAIN, 15, "AMP124")]
    fp16 = ENTRY + '    "amp_fp16": partial(torch.autocast, "cuda", dtype=torch.float16),\n'
    assert amp124((ENTRY, fp16)) == []
    changed = ("\n\ndef build_optimizer", '\n\n_PRECISION_CONTEXTS["fp16"] = partial(torch.autocast, "cuda")\n\n\ndef build_optimizer')
    assert amp124(changed) == []
    updated = ("\n\ndef build_optimizer", '\n\n_PRECISION_CONTEXTS.update(fp16=torch.autocast)\n\n\ndef build_optimizer')
    assert amp124(updated) == []


def test_a_factory_returning_a_module_level_partial_is_read_too():
    edits = (("    return _PRECISION_CONTEXTS[precision]\n", "    return BF16\n"),
             ("def build_precision_context(precision):\n",
              'BF16 = partial(torch.autocast, "cuda", dtype=torch.bfloat16)\n\n\ndef build_precision_context(precision):\n'))
    assert amp124(*edits) == [(TRAIN, 15, "AMP124")]
    assert amp124(*edits, ("BF16 = partial(", "BF16 = BF16_BASE = partial(")) == []  # not one plain binding
