"""The project pass's one scan view (issue 26's cost line, project/scan_view.py): every
`word in text` scan of the pass reads an ASCII-reduced copy of each 4-byte text (every non-ASCII
character written `?`) where that answers exactly, and each word is scanned once per pass.

The texts are shaped like fairseq's optimizers (facebookresearch/fairseq: `FairseqOptimizer`,
its `FP16Optimizer` subclass, a `MemoryEfficientFP16Optimizer` re-exported under another name)
and like huggingface/transformers' model files (a 4-byte text: one emoji in a docstring)."""

from __future__ import annotations

import collections
import os
import random

import pytest

from amplint.analysis.project import scaler_unhanded, text_tests
from amplint.analysis.project.call_words import CallWords
from amplint.analysis.project.foreign_stores import _storing_files

_OPTIMIZER = '''class FairseqOptimizer(object):
    def __init__(self, cfg):
        self.cfg = cfg
        self.inf = 1e9
'''
_FP16 = '''from fairseq.optim.fairseq_optimizer import FairseqOptimizer
class FP16Optimizer(FairseqOptimizer):
    """Wraps an optimizer for fp16 training \N{GRINNING FACE}"""
    def step(self):
        self.optimizer.step()
'''
_MEMORY = '''from fairseq.optim.fp16_optimizer import FP16Optimizer as Base
class MemoryEfficientFP16Optimizer(Base):
    """caf\u00e9 \u4e2d\u6587 scaling"""
    def __init__(self, cfg):
        super().__init__(cfg)
'''
_BERT = '''# \N{HUGGING FACE} Transformers
class BertModel(PreTrainedModel):
    def forward(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.encoder(x).half()
'''


class _Project:
    """A stand-in project: its Python files and their texts (what text_tests reads)."""

    def __init__(self, texts) -> None:
        self.files = dict(texts)
        self.python = sorted(p for p in self.files if p.endswith(".py"))


def scan_ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")


class _CountedText(str):
    """A text whose `word in text` tests are counted (per word)."""

    counts: collections.Counter = collections.Counter()

    def __contains__(self, word) -> bool:
        _CountedText.counts[word] += 1
        return str.__contains__(self, word)


def _tree():
    return {"fairseq/optim/fairseq_optimizer.py": _OPTIMIZER, "fairseq/optim/fp16_optimizer.py": _FP16,
            "fairseq/optim/memory_efficient.py": _MEMORY, "transformers/models/bert.py": _BERT,
            "fairseq/config.yaml": "optimizer: FP16Optimizer\n"}


def _needles(texts):
    """Words a pass asks (from the mixed monorepo tree's scans), and words cut from the texts
    at random, some with `?`, non-ASCII characters or both."""
    asked = ["autocast", "half(", ".forward_context(", "inf", "FairseqOptimizer", "FP16Optimizer",
             "Trainer", "_Connector", "register_module", "DTYPE_INTERMEDIATE", "fsdp_wrap", "", "?",
             "caf\u00e9", "\N{GRINNING FACE}", "x?", "training ?", "\u4e2d", "scaling"]
    rng = random.Random(26)
    for text in texts:
        for _ in range(40):
            at = rng.randrange(max(1, len(text)))
            asked.append(text[at:at + rng.randrange(1, 12)])
    for word in list(asked[:40]):
        asked += [word + "?", "?" + word, word.replace("a", "\u00e1")]
    return asked


def _real_texts():
    """Python texts of this repository (our own code), a few made 2- and 4-byte wide."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "amplint", "analysis", "project")
    names = sorted(n for n in os.listdir(root) if n.endswith(".py"))[:24]
    texts = {}
    for at, name in enumerate(names):
        with open(os.path.join(root, name), encoding="utf-8") as handle:
            text = handle.read()
        texts[f"pkg/{name}"] = text + ("", "# \u00e9\n", "# \u0100\n", "# \N{GRINNING FACE}\n")[at % 4]
    return texts


@pytest.mark.parametrize("texts", [_tree(), _real_texts()], ids=["generated", "real"])
def test_reduced_scans_answer_as_plain_scans(texts):
    """For every needle, the pass's scan (`holds`, from the scan view) finds exactly the files
    whose original text holds it; `scan_view` and its reduced copies are new (so this fails on
    the start snapshot, which has no view), the 4-byte texts are among the reduced ones."""
    from amplint.analysis.project import scan_view

    project = _Project(texts)
    reduced = [scan for path, scan, text in scan_view.scan_texts(project, "autocast") if scan is not text]
    assert reduced and all(scan.isascii() for scan in reduced)
    for word in _needles(list(texts.values())):
        plain = {path for path in project.python if word in texts[path]}
        assert {path for path in project.python if text_tests.holds(project, path, word)} == plain, word
        assert [path for path, _ in scan_view.texts_holding(project, word)] == sorted(plain), word


def test_a_word_is_scanned_once_per_pass(monkeypatch):
    """`inf` asked by `holds`, by the foreign stores' search and by the unhanded scalers' store
    search, `FairseqOptimizer` by `holds` and by the class flow's call-site search: each word is
    read once from each text (on start, once per asker). CallWords indexes from its first name
    since round 51; its scans (a non-word name, or a scan threshold) go through the same view."""
    from amplint.analysis.project import call_words

    monkeypatch.setattr(call_words, "_SCANS_BEFORE_INDEX", 4)
    _CountedText.counts.clear()
    # (ASCII texts: the scans read them, not reduced copies, and so are counted)
    project = _Project({path: _CountedText(scan_ascii(text)) for path, text in _tree().items()})
    assert text_tests.holds(project, "fairseq/optim/fairseq_optimizer.py", "inf")
    assert _storing_files(project, project.python, "inf") == ["fairseq/optim/fairseq_optimizer.py"]
    assert scaler_unhanded._stored_elsewhere(project, "inf") is False  # (only `self.inf` is stored)
    python = len(project.python)
    # `inf`: one scan; the store search reads the files it found (their `.inf`), not `inf` again
    # (round 52: once more in each)
    assert _CountedText.counts["inf"] == python
    assert text_tests.holds(project, "fairseq/optim/fp16_optimizer.py", "FairseqOptimizer")
    words = CallWords(project.python, project.files, project)
    assert words.files_calling("FairseqOptimizer") == ["fairseq/optim/fairseq_optimizer.py"]  # (`class X(`)
    # one scan, then the two files holding it read again by `calls`' own test
    assert _CountedText.counts["FairseqOptimizer"] == python + 2


def test_a_word_holding_a_scanned_word_is_read_only_in_its_files(monkeypatch):
    """fairseq-shaped: the class flow's call-site search scans for `Trainer`, then for
    `MegatronTrainer` (fairseq/model_parallel/megatron_trainer.py); `autocast` is asked of every
    file, then `.autocast_context_manager(`. Every text holding the longer word holds the
    shorter one, so the second scan reads only the files the first found (on start: every file),
    and answers as a plain scan, in order, lazily or not. (CallWords scans before its index
    only with a scan threshold: set here, none since round 51.)"""
    from amplint.analysis.project import call_words, scan_view

    monkeypatch.setattr(call_words, "_SCANS_BEFORE_INDEX", 4)

    _CountedText.counts.clear()
    trainer = "from fairseq.trainer import Trainer\nclass MegatronTrainer(Trainer):\n    pass\n"
    tree = {f"fairseq/tasks/task_{at}.py": f"def build_{at}(cfg):\n    return cfg\n" for at in range(12)}
    tree["fairseq/trainer.py"] = "class Trainer(object):\n    def autocast_context_manager(self):\n        pass\n"
    tree["fairseq/model_parallel/megatron_trainer.py"] = trainer
    tree["fairseq_cli/train.py"] = "trainer = MegatronTrainer(cfg)\nwith trainer.autocast_context_manager():\n    pass\n"
    project = _Project({path: _CountedText(text) for path, text in tree.items()})
    words = CallWords(project.python, project.files, project)
    assert words.files_calling("Trainer") == ["fairseq/trainer.py"]  # (`class Trainer(`)
    assert words.files_calling("MegatronTrainer") == ["fairseq/model_parallel/megatron_trainer.py",
                                                      "fairseq_cli/train.py"]
    holding_trainer = sum(1 for text in tree.values() if "Trainer" in text)
    # (`calls`' own test reads each file holding it once more)
    assert _CountedText.counts["MegatronTrainer"] == holding_trainer + 2
    assert text_tests.holds(project, "fairseq/trainer.py", "autocast")
    assert scan_view.files_holding(project, ".autocast_context_manager(") == {"fairseq_cli/train.py"}
    assert _CountedText.counts[".autocast_context_manager("] == 2
    assert [path for path, _ in scan_view.texts_holding(project, "Megatron")] == [
        "fairseq/model_parallel/megatron_trainer.py", "fairseq_cli/train.py"]
    assert scan_view.mentioned_outside(project, "MegatronTrainer", "fairseq_cli/train.py")
    assert not scan_view.mentioned_outside(project, ".autocast_context_manager(", "fairseq_cli/train.py")


def test_the_hydra_target_scan_is_the_pass_scan_of_its_word():
    """facebookresearch/fairseq-shaped Hydra configs in Python (`{"_target_": "fairseq.optim.
    FP16Optimizer"}`): the string-class search's scan for `_target_` is the pass's one scan of
    that word (scan view, memo), so any later asker reads no text again (on start: its own
    plain scan, then a second one: 2 x 5 == 5 fails); the nodes found are the same."""
    from amplint.analysis.project import scan_view
    from amplint.analysis.project.string_classes import StringConfigs

    _CountedText.counts.clear()
    tree = {path: text for path, text in _tree().items() if path.endswith(".py")}
    tree["fairseq/dataclass/configs.py"] = 'OPTIM = {"_target_": "fairseq.optim.fp16_optimizer.FP16Optimizer"}\n'
    project = _Project({path: _CountedText(scan_ascii(text)) for path, text in tree.items()})
    nodes = StringConfigs(project).nodes()
    assert [(node.path, node.target) for node in nodes] == [
        ("fairseq/dataclass/configs.py", "fairseq.optim.fp16_optimizer.FP16Optimizer")]
    assert scan_view.files_holding(project, "_target_") == {"fairseq/dataclass/configs.py"}
    assert _CountedText.counts["_target_"] == len(project.python)


def test_the_words_nearly_every_pass_scans_for_are_scanned_in_one_loop():
    """fairseq-shaped tree: text_tests' `autocast` and `half(`, string_classes' Hydra
    `_target_`, and the imported-function entries' `torch.optim.` (return_kinds) and
    `GradScaler` (chosen_builders) are asked of every text in nearly every
    pass; the first asked scans for all of them in one loop (each text tested once per word,
    while it is in the cache), and the others then read no text (round 52: the last two each
    their own scan; on start all five). The answers are the plain scans', whichever is asked
    first, lazily or not."""
    from amplint.analysis.project import scan_view

    tree = {path: text for path, text in _tree().items() if path.endswith(".py")}
    tree["fairseq/trainer.py"] = "with torch.autocast('cuda'):\n    loss = model.half()(x)\n"
    tree["fairseq/dataclass/configs.py"] = 'OPTIM = {"_target_": "fairseq.optim.FP16Optimizer"}\n'
    tree["fairseq/optim/adam.py"] = "import torch.optim.adam\nscaler = torch.cuda.amp.GradScaler()\n"
    tree["fairseq/modules/quant.py"] = "x = x.to(torch.float16)\n"
    expected = {word: [path for path in sorted(tree) if word in tree[path]]
                for word in scan_view.SCANNED_TOGETHER}
    assert set(expected) >= {"autocast", "half(", "_target_", "torch.optim.", "GradScaler"}
    assert all(expected.values()) and expected["autocast"] != expected["_target_"]
    read = sum(1 for text in tree.values() if not scan_view._wide(text))  # (a wide one: its reduced copy)
    for first in expected:
        _CountedText.counts.clear()
        project = _Project({path: _CountedText(text) for path, text in tree.items()})
        if first == "_target_":
            assert [path for path, _ in scan_view.texts_holding(project, first)] == expected[first]
        else:
            assert scan_view.files_holding(project, first) == set(expected[first])
        assert scan_view.scans_made(project) == {word: 1 for word in expected}
        assert all(_CountedText.counts[word] == read for word in expected)
        for word in expected:
            assert scan_view.files_holding(project, word) == set(expected[word])
            assert [path for path, _ in scan_view.texts_holding(project, word)] == expected[word]
        assert all(_CountedText.counts[word] == read for word in expected)  # none read again



def test_an_alias_scan_of_a_class_name_holding_a_scanned_name_reads_only_its_files():
    """fairseq-shaped (facebookresearch/fairseq modules/: `TransformerSentenceEncoderLayer`, then
    its `SparseTransformerSentenceEncoderLayer` subclass): dispatch.renamed asks, per class name,
    whether some file binds it under another name. The first scan is read to the end (no alias)
    and kept, so the second name, which contains the first, reads only the first's files (on
    start: every file again). Answers are those of the pattern over every text."""
    from amplint.analysis.project import dispatch

    layer, sparse = "TransformerSentenceEncoderLayer", "SparseTransformerSentenceEncoderLayer"
    tree = {f"fairseq/criterions/loss_{at}.py": f"def loss_{at}(model, sample):\n    return model(sample)\n"
            for at in range(10)}
    tree["fairseq/modules/transformer_sentence_encoder_layer.py"] = f"class {layer}(nn.Module):\n    pass\n"
    tree["fairseq/modules/sparse_transformer_sentence_encoder_layer.py"] = (
        f"from fairseq.modules import {layer}\nclass {sparse}({layer}):\n    pass\n")
    tree["fairseq/modules/sparse_transformer_sentence_encoder.py"] = (
        f"from fairseq.modules.sparse_transformer_sentence_encoder_layer import {sparse}\n"
        f"layers = [{sparse}() for _ in range(2)]\n")

    def scans(tree):
        _CountedText.counts.clear()
        project = _Project({path: _CountedText(text) for path, text in tree.items()})
        return project, [dispatch.renamed(project, (layer,)), dispatch.renamed(project, (sparse,))]

    project, answers = scans(tree)
    assert answers == [False, False]
    assert _CountedText.counts[layer] == len(project.python)
    holding = sum(1 for text in tree.values() if layer in text)
    assert _CountedText.counts[sparse] == holding < len(project.python)
    # the twin: the encoder binds the subclass under another name, found in the narrowed files
    path = "fairseq/modules/sparse_transformer_sentence_encoder.py"
    tree[path] = tree[path].replace(f"import {sparse}", f"import {sparse} as SparseLayer")
    project, answers = scans(tree)
    assert answers == [False, True]
    assert dispatch.renamed(project, (layer, sparse)) is True



class _Unread(str):
    """A text whose original must not be scanned (its reduced copy answers)."""

    def __contains__(self, word) -> bool:
        raise AssertionError(f"the original was scanned for {word!r}")


def test_the_scaler_callee_files_read_the_reduced_copies():
    """huggingface/transformers-shaped: a trainer text stored 4 bytes a character (an emoji in
    its docstring) calls `loss.backward()`; scaler_methods.callee_files finds the files holding a
    callee word as a plain scan of the originals does, and reads the 4-byte texts' ASCII copies,
    not the originals (on start: the originals, once per word tested)."""
    from amplint.analysis.project import scaler_methods, scan_view

    tree = dict(_tree())
    tree["transformers/trainer.py"] = '"""\N{HUGGING FACE} Trainer"""\ndef step(loss):\n    loss.backward()\n'
    tree["transformers/utils.py"] = '"""\N{HUGGING FACE} utils"""\ndef noop():\n    pass\n'
    plain = [path for path in sorted(p for p in tree if p.endswith(".py"))
             if any(word in tree[path] for word in scaler_methods.CALLEE_TESTS)]
    assert "transformers/trainer.py" in plain and "transformers/utils.py" not in plain
    project = _Project({path: _Unread(text) if scan_view._wide(text) else text for path, text in tree.items()})
    assert sum(type(text) is _Unread for text in project.files.values()) >= 2
    assert scaler_methods.callee_files(project) == plain
