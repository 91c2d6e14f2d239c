"""The registry search's names (registry_files.py) on prose: HuggingFace transformers'
`models/clvp/modeling_clvp.py` names the paper "ROFORMER: ENHANCED TRANSFORMER WITH ROTARY
POSITION EMBEDDING" in a class docstring whose line reads "Class for CLVP. It was proposed in",
and Lightning's `utilities/seed.py`-style docstrings bind `It` again ("It sets seed=..."). In
a monorepo beside mmdetection 2.28, whose `TRANSFORMER` registry its `models/utils/builder.py`
defines, the docstring's `for CLVP. It was proposed in` was read as a `for` target, so every name
bound from `It` joined `TRANSFORMER`'s names, past MAX_ALIASES: a build of `TRANSFORMER` then read
the registrations of every file of the registry search (214 on the mixed monorepo) to find the
one file that registers into it. Two words side by side are never a `for` target: the prose is
dropped, every real target (a comprehension's, a loop's, one after a string that says "for")
still counts. Counted in files, not time."""

from __future__ import annotations

from amplint.analysis.project.registry_files import MAX_ALIASES, RegistryFiles, names_bound_from

_CLVP = '''import torch.nn as nn


class ClvpRotaryPositionalEmbedding(nn.Module):
    """
    Rotary Position Embedding Class for CLVP. It was proposed in the paper 'ROFORMER: ENHANCED TRANSFORMER WITH ROTARY
    POSITION EMBEDDING', Please see https://huggingface.co/papers/2104.09864.
    """

    def __init__(self, config):
        super().__init__()
'''

_BUILDER = "from mmcv.utils import Registry\n\nTRANSFORMER = Registry('Transformer')\n"
_REGISTERING = (
    "from mmdet.models.utils.builder import TRANSFORMER\n\n\n"
    "@TRANSFORMER.register_module()\nclass DetrTransformer:\n    pass\n"
)


def _tree() -> dict:
    texts = {
        "mmdet/models/utils/builder.py": _BUILDER,
        "mmdet/models/utils/transformer.py": _REGISTERING,
        "transformers/models/clvp/modeling_clvp.py": _CLVP,
    }
    for k in range(MAX_ALIASES + 8):  # heads and losses registered elsewhere; seed-style docstrings
        texts[f"mmdet/models/heads/head{k:02d}.py"] = (
            f"from ..builder import HEADS\n\n\n@HEADS.register_module()\nclass Head{k}:\n    pass\n"
        )
        texts[f"lightning/utilities/seed{k:02d}.py"] = f'"""It sets mode{k}=1 for the run."""\n'
    return texts


def test_a_docstring_for_is_no_target_and_real_targets_still_bind():
    assert names_bound_from(_CLVP, "TRANSFORMER") == set()  # start: {'CLVP', 'It', 'was', 'proposed'}
    loop = "ALIASES = {}\nfor key, reg in [('t', TRANSFORMER)]:\n    ALIASES[key] = reg\n"
    assert {"key", "reg", "ALIASES"} <= names_bound_from(loop, "TRANSFORMER")
    comprehension = "ok = 'wait for all' in s or [t for t in (TRANSFORMER,)]\n"
    assert {"ok", "t"} <= names_bound_from(comprehension, "TRANSFORMER")
    prose_then_loop = "ok = 'wait for all of it' in s or [t for t in (TRANSFORMER,)]\n"
    assert "t" in names_bound_from(prose_then_loop, "TRANSFORMER")
    tuple_target = "for (a, b), *c in pairs(TRANSFORMER): pass\n"
    assert {"a", "b", "c"} <= names_bound_from(tuple_target, "TRANSFORMER")
    attribute_target = "for self.reg in (TRANSFORMER,): pass\n"
    assert "reg" in names_bound_from(attribute_target, "TRANSFORMER")


def test_a_build_reads_only_the_files_that_may_register_into_its_registry():
    texts = _tree()
    files = RegistryFiles(sorted(texts), texts)
    # start: None (past MAX_ALIASES through `It`): every file of the search was read
    assert files.names("TRANSFORMER") == frozenset({"TRANSFORMER"})
    assert files.for_registry(("reg", ("mmdet/models/utils/builder.py", "TRANSFORMER")), sorted(texts)) == [
        "mmdet/models/utils/transformer.py"
    ]
    # the twin: a registry whose names do pass the bound still reads every file, as before
    texts["mmdet/models/heads/__init__.py"] = "from .builder import HEADS\nfor It in [HEADS]:\n    pass\n"
    files = RegistryFiles(sorted(texts), texts)
    assert files.names("HEADS") is None
    assert len(files.for_registry(("reg", ("mmdet/models/builder.py", "HEADS")), sorted(texts))) == len(texts)


def test_every_real_for_target_on_real_sources_still_binds():
    """Over amplint's own sources and fixtures/: on every line, the `for` targets read now are
    among those read before (only prose is dropped), and every name a real `for` target binds
    (a loop's or a comprehension's, written on one line) is read."""
    import ast
    import pathlib
    import re

    from amplint.analysis.project import registry_files as rf

    root = pathlib.Path(__file__).resolve().parents[1]
    paths = sorted((root / "amplint").rglob("*.py")) + sorted((root / "fixtures").rglob("*.py"))
    dropped = real = 0
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        now = [set(rf._IDENT.findall(" ".join(rf._for_targets(line)))) for line in lines]
        for line, found in zip(lines, now):
            before = set(rf._IDENT.findall(" ".join(rf._FOR.findall(line))))
            assert found <= before, line
            dropped += found != before
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                target = node.target
                if target.lineno != target.end_lineno or not re.search(r"\bin\b", lines[target.lineno - 1]):
                    continue
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        real += 1
                        assert name.id in now[target.lineno - 1], (path, target.lineno)
    assert real > 1000 and dropped > 0
