"""A call the project resolves to a project module's forward is AMP101's evidence in the calling
file (issue 26; project/module_outputs.forward_call_entries, facts/half_evidence.EntryForwardCall),
now that a callee's name is none.

forward_call_metric is shaped like KevinMusgrave/pytorch-metric-learning's testers
(`compute_all_embeddings(trunk, embedder, dataloader, ...)`: the embeddings of a dataset by the
`trunk` and `embedder` models the trainer built and passed in; here written into a float32
bank by `index_copy_` under float16 autocast). Its code with "cuda" read as "cpu", under torch
2.13 CPU autocast (float16 and bfloat16), raises 'index_copy_(): self and source expected to
have the same dtype'; the clean twin (`q.float()`) runs. Neither parameter's name says it is a
network: only the project's fact (train.py passes `MLPEmbedder()` and `Trunk()`) shows it.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings
from amplint.analysis.project import build

from project_files import assert_warm_run_follows_an_edit, code_findings, load

PROJECT = "forward_call_metric"
SHOWN = [("testers.py", 6, "AMP101")]
A_FUNCTION = (("from models import MLPEmbedder, Trunk", "from models import Trunk, l2_embedder"),
              ("embedder = MLPEmbedder().cuda()", "embedder = l2_embedder"))


def findings(replace=()):
    return code_findings(load(PROJECT, replace), "AMP101", Settings.default())[0]


def test_a_module_another_file_passes_in_is_a_module_output_and_the_twin_is_silent():
    assert findings() == SHOWN
    assert findings((("indices.cuda(), q)", "indices.cuda(), q.float())"),)) == []


def test_a_function_passed_in_is_no_module_whatever_the_parameter_is_called():
    # `encoder` was a network's name to the guess; the project shows a plain function
    encoder = (("def compute_all_embeddings(trunk, embedder,", "def compute_all_embeddings(trunk, encoder,"),
               ("q = embedder(trunk", "q = encoder(trunk"))
    assert findings(encoder) == SHOWN
    assert findings(encoder + A_FUNCTION) == []


def test_only_a_function_that_writes_a_factory_buffer_is_handed_the_fact():
    # embedding_norms calls the same modules under its region and writes no buffer: its file
    # (linted in the first pass) gets nothing for it, nor does any other file
    project = build(load(PROJECT))
    handed = {(path, e.scope, e.callee) for path in project.files for e in project.entries_for(path)
              if type(e).__name__ == "EntryForwardCall"}
    assert handed == {(f"{PROJECT}/testers.py", "compute_all_embeddings", ("embedder",)),
                      (f"{PROJECT}/testers.py", "compute_all_embeddings", ("trunk",))}


def test_a_warm_run_follows_the_caller_passing_a_function(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, PROJECT, "train.py", A_FUNCTION, "AMP101", SHOWN)
