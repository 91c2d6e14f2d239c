"""The imported-entry modules' text questions (issue 26's cost line, round 48): each asks a file's
text only what can still change its answer, and a word several of them ask of every file
("autocast") is read once per file for the pass (project/text_tests.py).

Projects (our own code, under tests/projects/): crossfile_finfo_imagen (lucidrains/imagen-pytorch:
`max_neg_value` of utils.py filling under autocast, return_kinds "finfo"), crossfile_device_yolov5
(ultralytics/yolov5: `select_device` of utils/torch_utils.py, "device"), half_lingua_config
(facebookresearch/lingua: a dataclass field default torch.float16, dtype_fields.py) and
config_llama_recipes_dtypes (meta-llama/llama-recipes: a config property's dtype,
config_dtypes.py). The entries they are known for are still found."""

from __future__ import annotations

import collections
import os
import re

import pytest
from project_files import load

from amplint.analysis.engine import Settings
from amplint.analysis.project import build
from amplint.analysis.project.dtype_fields import names_a_half_dtype
from amplint.analysis.project.function_entries import may_run_under_autocast
from amplint.analysis.project.imported import imported_entries

KNOWN = {  # project -> (file, entry type, kind) that its imported entries hold
    "crossfile_finfo_imagen": ("imagen_pytorch/imagen_pytorch.py", "EntryReturn", "finfo"),
    "crossfile_device_yolov5": ("train.py", "EntryReturn", "device"),
    "half_lingua_config": ("apps/lm/train.py", "EntryDtypeField", None),
    "config_llama_recipes_dtypes": ("src/llama_recipes/utils/train_utils.py", "EntryDtypeField", None),
}


class _Text(str):
    """A file's text that counts the substring tests asked of it."""

    asked: collections.Counter

    def __contains__(self, word) -> bool:
        self.asked[word] += 1
        return str.__contains__(self, word)


def _asked_entries(name):
    files = load(name)
    project = build(files, Settings.default())
    asked = {}
    texts = {}
    for path, text in project.files.items():
        texts[path] = _Text(text)
        texts[path].asked = asked[path] = collections.Counter()
    project.files = texts
    return project, imported_entries(project, sorted(files), {}), asked


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_each_file_asked_only_what_can_matter(name):
    project, found, asked = _asked_entries(name)
    where, kind_of_entry, kind = KNOWN[name]
    held = [e for path, entries in found.items() if path.endswith(where) for e in entries
            if type(e).__name__ == kind_of_entry and (kind is None or e.kind == kind)]
    assert held, found
    for path, words in asked.items():
        text = str(project.files[path])
        assert words["autocast"] <= 1 and words["half("] <= 1, (path, words)  # once for the pass, whoever asks
        if "half(" not in text:
            assert not words[".half("], (path, words)
        if not may_run_under_autocast(project, path) and "autocast" not in text:
            # the fills and the autocast calls are read only where a region can run
            assert not (words["fill"] or words["full"] or words["autocast("]), (path, words)
        if not names_a_half_dtype(text):
            assert not words["dataclass"], (path, words)  # a dataclass without a half literal holds no field
        if "float16" not in text:
            assert not words["bfloat16"], (path, words)  # "float16" already said no


def test_a_word_is_read_once_for_the_pass():
    """Asked of every file by three modules (foreign stores, chosen builders, local callers)."""
    project, _found, asked = _asked_entries("crossfile_device_yolov5")
    assert sum(words["autocast"] for words in asked.values()) == len(
        [path for path in project.python if project.files[path]])  # an empty text is not asked


def test_answers_equal_direct_tests():
    from amplint.analysis.project.text_tests import HALF_CASTS
    from amplint.analysis.project.text_tests import HALF_TEXT
    from amplint.analysis.project.text_tests import casts_half, half_cast, holds, names_half_literal

    files = load("config_llama_recipes_dtypes")
    files["notes.yaml"] = "autocast: torch.float16\n"  # not Python: tested directly, not kept
    files["loose.py"] = "x = torch.bfloat16  # autocast\ny = m.half()\n"
    casts = [".to(torch.bfloat16)", "m.to(dtype=half)", "m.type(torch.HalfTensor)", "m.to(\nfloat16)",
             "m.to(x) # bfloat16", "m.bfloat16()", "m.half ()", "m.to(torch.BFloat16)", "m.to(bf16)"]
    for at, cast in enumerate(casts):
        files[f"cast{at}.py"] = f"def f(m):\n    return {cast}\n"
    project = build(files, Settings.default())
    for path, text in files.items():
        for word in ("autocast", "torch", "autocast(", "GradScaler"):
            assert holds(project, path, word) == (word in text)
        assert names_half_literal(project, path) == names_a_half_dtype(text)
        assert casts_half(project, path) == (HALF_CASTS.search(text) is not None)
        assert half_cast(project, path) == (HALF_TEXT.search(text) is not None)
    assert sum(half_cast(project, path) for path in files) >= 3
    assert all(re.fullmatch(r".*\.pyi?", path) for path in project.python)


_REGISTER_DEF = re.compile(r"\bdef\s+\w*register\w*\s*\(")
_RETURN_ITEM = re.compile(r"^[ \t]*return[ \t]+[\w.]+(?:\[[\w.]+\])*\[\w+\](?:[ \t]*,[^\n#]*)?[ \t]*(?:#.*)?$", re.M)
TRICKY = [
    "undef register(x):\n", "def register(x):\n    return R[x]\n", "xdef  def register(\n  return D[k]\n",
    "def\tmy_register_fn (a):\n\treturn A.b[c][k]  # why\n", "x = 1; return R[k]\ndef register():\n",
    "def register():\n  y return R[k]\n", "def_register(a)\n    return R[k], 1\n", "\u00e9def register(a):\n return R[k]\n",
    "def register(a):\n  return R[k] # c\n", "def register(a):\n\n\n   return  R[k]\nreturn x[y]",
]


def test_registry_text_test_equals_the_anchored_searches():
    """registry_classes._may_register, led by each pattern's literal (round 48), against the
    `\\b` / `^` led searches it replaced, on tricky texts and every test project's texts."""
    from project_files import PROJECTS

    from amplint.analysis.project.registry_classes import _may_register

    texts = list(TRICKY)
    for name in sorted(os.listdir(PROJECTS)):
        if os.path.isdir(os.path.join(PROJECTS, name)):
            texts += [text for text in load(name).values() if "register" in text]
    hits = 0
    for text in texts:
        expected = ("register" in text and _REGISTER_DEF.search(text) is not None
                    and _RETURN_ITEM.search(text) is not None)
        assert _may_register(text) == expected, text[:80]
        hits += expected
    assert hits >= 5 and len(texts) > 50


def test_import_spans_by_bisection_equal_the_scan():
    from amplint.analysis.project.site_text import CodeText

    texts = [text for name in ("reach_template", "crossfile_device_yolov5", "half_lingua_config")
             for text in load(name).values()]
    texts.append("from a import (\n  b,\n  c)\nimport d\nx = 1\nfrom e import f as g\n")
    checked = 0
    for text in texts:
        view = CodeText(text)
        spans = list(view._spans)
        for position in range(len(text) + 1):
            assert view._in_import(position) == any(a <= position < b for a, b in spans)
            checked += 1
    assert checked > 10_000
