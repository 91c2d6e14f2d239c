"""The class flow reads registrations one registry at a time (registries.py, registry_files.py):
a build of `HEADS` reads the files registering heads, not mmdetection 2.x's pipelines,
datasets and losses (`@PIPELINES.register_module()` in mmdet/datasets/pipelines/*.py), unless
something builds them. Counted in files read (not time). Its answers do not depend on the order
the questions are asked: a registration's registry is resolved as a question of its own, and
whether a class is registered (the config narrowing) is read from its own file."""

from __future__ import annotations

from project_files import load

from amplint.analysis.project import build, parse_or_none
from amplint.analysis.project.classflow import ClassFlow
from amplint.analysis.project.summary import summarize

ROOT = "reach_mmcv_fp16/detlite"

PIPELINES_BUILDER = '''from mmcv.utils import Registry

PIPELINES = Registry("pipeline")
DATASETS = Registry("dataset")
'''

PIPELINE = '''import numpy as np

from ..builder import PIPELINES


@PIPELINES.register_module()
class Transform{k}:
    def __call__(self, results):
        results["img"] = np.flip(results["img"], axis={k} % 2)
        return results
'''

LOSS = '''import torch
from torch import nn

from ..builder import LOSSES


@LOSSES.register_module()
class ExtraLoss{k}(nn.Module):
    def forward(self, scores, labels):
        return torch.sigmoid(scores).mean() - labels.mean()
'''

# a head registered through an alias of HEADS: read for a build of HEADS
ALIASED_HEAD = '''import torch
from mmcv.runner import BaseModule

from ..builder import HEADS as MODEL_HEADS


@MODEL_HEADS.register_module()
class AliasedHead(BaseModule):
    def forward(self, x, mask):
        return x.masked_fill(~mask, -1e9)
'''


def _mmdet_like(count: int, aliased: bool = False) -> dict:
    """reach_mmcv_fp16 (shaped like mmdetection 2.x) with `count` pipelines and `count` losses
    that nothing builds."""
    files = load("reach_mmcv_fp16")
    files[f"{ROOT}/datasets/__init__.py"] = ""
    files[f"{ROOT}/datasets/builder.py"] = PIPELINES_BUILDER
    files[f"{ROOT}/datasets/pipelines/__init__.py"] = ""
    for k in range(count):
        files[f"{ROOT}/datasets/pipelines/transform_{k}.py"] = PIPELINE.format(k=k)
        files[f"{ROOT}/models/losses/extra_{k}.py"] = LOSS.format(k=k)
    if aliased:
        files[f"{ROOT}/models/heads/aliased_head.py"] = ALIASED_HEAD
    return files


def _run(files, light=True):
    """(entries, files summarised on demand, files whose registrations were read alone)."""
    asked, read = [], []

    def many(paths):
        asked.extend(paths)
        return {path: summarize(path, files[path], parse_or_none(files[path])) for path in paths}

    def registrations(paths):
        from amplint.analysis.project.ast_registrations import ast_registrations

        read.extend(paths)
        return {path: ast_registrations(path, files[path]) if light else None for path in paths}

    project = build(files, summarize_many=many, registrations_many=registrations)
    entries = {path: project.entries_for(path) for path in files}
    return entries, asked, read


def test_a_build_reads_only_the_files_that_may_register_into_its_registry():
    reads = []
    for count in (0, 4, 16):
        files = _mmdet_like(count)
        entries, asked, read = _run(files)
        assert any(entries.values())  # the fp16 detector's region reaches its head
        assert not any("transform_" in path or "extra_" in path for path in read + asked)
        reads.append((len(read), len(asked)))
        # the same entries when every registration must come from a summary
        assert _run(files, light=False)[0] == entries
    assert reads[0] == reads[1] == reads[2]  # on the base: 2 more registration reads per count


def test_a_registration_through_an_alias_is_read():
    files = _mmdet_like(4, aliased=True)
    entries, _, read = _run(files)
    aliased = f"{ROOT}/models/heads/aliased_head.py"
    assert aliased in read
    assert entries == _run(files, light=False)[0]


def test_the_names_that_may_denote_a_registry():
    from amplint.analysis.project.registry_files import names_bound_from, registration_heads

    text = ("from .builder import (HEADS as H,\n    NECKS)\nX = HEADS\na = b = HEADS\n"
            "if c:\n    D = (\n        HEADS)\nfor E in [HEADS]:\n    pass\n"
            "class K:\n    reg = HEADS\n\n    def f(self):\n        self.g = HEADS\n"
            "        h = build(x=HEADS)\n        y = 1\nprint(HEADS)\n")
    assert names_bound_from(text, "HEADS") == {"H", "X", "a", "b", "D", "E", "reg", "g", "h"}
    assert registration_heads("@HEADS.register_module()\nclass A:\n    pass\n"
                              "MODELS.register_module(module=A)\natexit.register(f)\n") == {"HEADS", "MODELS", "atexit"}
    assert registration_heads("@make().register_module()\nclass A:\n    pass\n") is None
    assert registration_heads("x = (a.  # why\n     register_module)\n") is None



def test_a_registry_named_in_a_large_module_block_stops_the_search():
    # a script whose `if __name__ == "__main__":` block mentions the registry binds every name
    # of the block, each of them named again in other files, which bind more: the closure would
    # search every text once per name of the tree (it did, linting amplint's own repository).
    # Past MAX_ALIASES names no file is told apart: every registering file is read, as before.
    from amplint.analysis.project.registry_files import MAX_ALIASES, RegistryFiles

    main = "from .builder import HEADS\n\nif __name__ == '__main__':\n    head = HEADS\n" + "".join(
        f"    step{i} = {i}\n" for i in range(3 * MAX_ALIASES))
    texts = {"tools/train.py": main}
    for k in range(20):
        texts[f"pkg/m{k}.py"] = "".join(f"alias{k}_{i} = step{i}\n" for i in range(3 * MAX_ALIASES))
    texts["pkg/head.py"] = "@HEADS.register_module()\nclass Head:\n    pass\n"
    texts["pkg/loss.py"] = "@LOSSES.register_module()\nclass Loss:\n    pass\n"
    files = RegistryFiles(sorted(texts), texts)
    key = ("reg", ("pkg/builder.py", "HEADS"))
    assert files.for_registry(key, ["pkg/head.py", "pkg/loss.py"]) == ["pkg/head.py", "pkg/loss.py"]
    assert files.texts_searched <= (MAX_ALIASES + 1) * len(texts)
    # a registry named only where registries are: its files are told apart
    quiet = {path: text for path, text in texts.items() if path != "tools/train.py"}
    assert RegistryFiles(sorted(quiet), quiet).for_registry(key, ["pkg/head.py", "pkg/loss.py"]) == ["pkg/head.py"]

def _closure_one_by_one(texts, name):
    """The alias search as it was written first (each registry searches its words again, text
    by text, stopping once past MAX_ALIASES): the reference the shared search must equal."""
    from amplint.analysis.project.registry_files import MAX_ALIASES, names_bound_from

    names, todo = {name}, [name]
    while todo:
        word = todo.pop()
        for path in sorted(texts):
            if word in texts[path]:
                for bound in names_bound_from(texts[path], word) - names:
                    names.add(bound)
                    todo.append(bound)
                if len(names) > MAX_ALIASES:
                    return None
    return frozenset(names)


def _shared_alias_tree(steps: int):
    """A research monorepo holding mmdetection 2.x beside other frameworks (benchmarks/
    .monorepo): the registries are aliases of one another (`BACKBONES = HEADS = NECKS =
    MODELS`, as mmdet/models/builder.py writes them since 2.18), and a training script's
    `if __name__ == "__main__":` block mentions BACKBONES among `steps` bindings."""
    texts = {
        "det/builder.py": "from mmcv.utils import Registry\n\nMODELS = Registry('models')\n"
                          "BACKBONES = HEADS = NECKS = MODELS\nLOSSES = Registry('loss')\n",
        "det/head.py": "from .builder import HEADS\n\n\n@HEADS.register_module()\nclass Head:\n    pass\n",
        "det/neck.py": "from .builder import NECKS\n\n\n@NECKS.register_module()\nclass Neck:\n    pass\n",
        "det/loss.py": "from .builder import LOSSES\n\n\n@LOSSES.register_module()\nclass Loss:\n    pass\n",
        "det/backbone.py": "from .builder import BACKBONES as B\n\n\n@B.register_module()\nclass Net:\n    pass\n",
        "tools/train.py": "from det.builder import BACKBONES\n\nif __name__ == '__main__':\n    net = BACKBONES\n"
                          + "".join(f"    step{i} = {i}\n" for i in range(steps)),
    }
    for k in range(6):  # other frameworks' files, naming none of them
        texts[f"other/m{k}.py"] = "".join(f"alias{k}_{i} = step{i}\n" for i in range(steps))
    return texts


def test_registries_sharing_aliases_search_each_word_once(monkeypatch):
    # the mixed tree (benchmarks/monorepo.py): five registries whose aliases all passed
    # MAX_ALIASES through the same few words; each registry searched those words again in
    # every text naming them (11,700-13,800 reads of a text for a word, by the set order; 3,142
    # now). A word's bindings in a text are the same for every registry: read once.
    import amplint.analysis.project.registry_files as registry_files
    from amplint.analysis.project.registry_files import MAX_ALIASES, RegistryFiles

    reads = {}
    inner = registry_files.names_bound_from

    def counted(text, word):
        reads[(text, word)] = reads.get((text, word), 0) + 1
        return inner(text, word)

    for steps in (3, 3 * MAX_ALIASES):  # the registries told apart, and past the bound
        texts = _shared_alias_tree(steps)
        monkeypatch.setattr(registry_files, "names_bound_from", inner)
        expected_names = {name: _closure_one_by_one(texts, name)
                          for name in ("HEADS", "NECKS", "BACKBONES", "LOSSES", "MODELS")}
        monkeypatch.setattr(registry_files, "names_bound_from", counted)
        reads.clear()
        files = RegistryFiles(sorted(texts), texts)
        registering = ["det/backbone.py", "det/head.py", "det/loss.py", "det/neck.py"]
        for name in ("HEADS", "NECKS", "BACKBONES", "LOSSES", "MODELS"):
            assert files.names(name) == expected_names[name]
            key = ("reg", ("det/builder.py", name))
            expected = registering if files.names(name) is None else [
                p for p in registering if p != "det/loss.py" or name == "LOSSES"]
            if name == "LOSSES":
                expected = ["det/loss.py"]
            assert files.for_registry(key, registering) == expected
        assert reads and max(reads.values()) == 1  # base: a shared word's texts read once per registry


# The config narrowing (flowindex.narrow_by_config): `loss_type(loss_cls)` holds FocalLoss or
# CrossEntropyLoss, both registered losses; the head's default `loss_cls=dict(type=...)` names
# CrossEntropyLoss, so only it is made. On the base, this held only after some build had read
# every registration: asked first, the same question held both.
NARROW = {
    "det/__init__.py": "",
    "det/builder.py": (
        "from mmcv.utils import Registry\n\nMODELS = Registry('models')\nHEADS = MODELS\n"
        "LOSSES = MODELS\n\n\ndef build_head(cfg):\n    return HEADS.build(cfg)\n"
    ),
    "det/losses.py": (
        "from torch import nn\n\nfrom .builder import LOSSES\n\n\n@LOSSES.register_module()\n"
        "class FocalLoss(nn.Module):\n    def forward(self, x):\n        return x.sigmoid().mean()\n\n\n"
        "@LOSSES.register_module()\nclass CrossEntropyLoss(nn.Module):\n"
        "    def forward(self, x):\n        return x.softmax(-1).mean()\n"
    ),
    "det/head.py": (
        "from torch import nn\n\nfrom .builder import HEADS\nfrom .losses import CrossEntropyLoss, FocalLoss\n\n\n"
        "@HEADS.register_module()\nclass Head(nn.Module):\n"
        "    def __init__(self, loss_cls=dict(type='CrossEntropyLoss'), use_focal=False):\n"
        "        super().__init__()\n        loss_type = FocalLoss if use_focal else CrossEntropyLoss\n"
        "        self.loss_cls = loss_type(loss_cls)\n\n    def forward(self, x):\n"
        "        return self.loss_cls(x)\n"
    ),
    "det/detector.py": (
        "from torch import nn\n\nfrom .builder import build_head\n\n\nclass Detector(nn.Module):\n"
        "    def __init__(self, head):\n        super().__init__()\n        self.head = build_head(head)\n\n"
        "    def forward(self, x):\n        return self.head(x)\n"
    ),
}


def test_answers_do_not_depend_on_the_order_of_questions():
    project = build(dict(NARROW))
    loss = ("det/head.py", "Head.forward", ("self", "loss_cls"), "")
    head = ("det/detector.py", "Detector.forward", ("self", "head"), "")
    alone = ClassFlow(project).call_targets(*loss)
    after = ClassFlow(project)
    assert [t[0] for t in after.call_targets(*head)] == [("det/head.py", "Head.forward")]
    assert after.call_targets(*loss) == alone
    assert [t[0] for t in alone] == [("det/losses.py", "CrossEntropyLoss.forward")]
