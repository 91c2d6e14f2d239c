"""The class flow's text index (amplint.analysis.project.call_words): the same answers as the
regexes it replaces, and the work it does does not grow with the names asked."""

import random
import re

from amplint.analysis.project.call_words import (
    _CALLED_GROUP, _SCANS_BEFORE_INDEX, CallWords, _reversed_called_words, called_words, calls, indirect_binders,
    super_rebound,
)

_REVERSED_CALL_WORDS = re.compile(r"\(\s*(\w+)")  # (the call index's words, before it took `)`)

_ALPHABET = ["a", "b", "_", "1", "é", " ", "\t", "\n", "\u00a0", "(", ")", ".", "=", ":", ",", "ab", "ba", "(x"]


def _texts(count, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_called_words_are_what_the_call_regex_finds():
    for text in _texts(3000, 1) + ["ab(", "ab (x", "x.ab\n(", "é1(", "(ab)(", "ab", "1ab(", "a_b\u00a0(", "ab\t\n ("]:
        words = called_words(text)
        for word in ["a", "b", "ab", "ba", "a_b", "é1", "1ab", "_", "1", "bb", "aa"]:
            expected = re.search(r"\b" + re.escape(word) + r"\s*\(", text) is not None
            assert (word in words) is expected, (text, word)
            assert calls(word, text) is expected, (text, word)


_WIDE = _ALPHABET + ["\u2003", "\u3000", "\x1c", "\x0b", "\x0c", "\u0301", "\u00b2", "\u0663", "\u2160", "((", "a\n(", "x1", "ééé"]


def _split_called_words(text):
    """The index's words as the previous implementation read them (split at `(`, the trailing run
    of `str.isalnum()`/`_` characters after `str.rstrip()`)."""
    out = set()
    pieces = text.split("(")
    pieces.pop()
    for piece in pieces:
        end = len(piece.rstrip())
        start = end
        while start and (piece[start - 1].isalnum() or piece[start - 1] == "_"):
            start -= 1
        if start < end:
            out.add(piece[start:end])
    return out


def test_called_words_are_the_previous_index_words_and_the_regex_words():
    rng = random.Random(5)
    texts = ["".join(rng.choice(_WIDE) for _ in range(rng.randint(0, 60))) for _ in range(4000)]
    for text in texts + ["ab(", "(", "((a", "a\u0301 (", "\u00b2(", "x \u3000\x1c(", "é\n\n  (y)"]:
        expected = {m.group(1) for m in re.finditer(r"\b(\w+)\s*\(", text)}
        assert called_words(text) == expected == _split_called_words(text), text


def test_files_calling_from_the_index_and_from_scans_agree():
    texts = {f"f{i}.py": text for i, text in enumerate(_texts(200, 2))}
    paths = sorted(texts)
    words = ["a", "b", "ab", "ba", "_", "é", "a.b", "x"]
    scanned = CallWords(paths, texts)
    by_scan = {word: scanned.files_calling(word) for word in words[:7]}
    indexed = CallWords(paths, texts)
    indexed._index()
    for word in words[:7]:
        assert indexed.files_calling(word) == by_scan[word]
    assert indexed.files_calling("a.b") == [p for p in paths if calls("a.b", texts[p])]  # not a word: scanned


def test_the_index_reads_each_file_once_whatever_the_names_asked():
    texts = {f"pkg/m{i}.py": f"def f{i}(x):\n    return g{i % 7}(x) + h (x)\n" for i in range(60)}
    words = CallWords(sorted(texts), texts)
    for round_ in range(3):
        for i in range(40):
            found = words.files_calling(f"g{i % 7}")
            assert found == [p for p in sorted(texts) if f"g{i % 7}(" in texts[p]]
    assert words.files_calling("h") == sorted(texts)
    # every file is indexed once (after `_SCANS_BEFORE_INDEX` scans, none since round 51):
    # 121 questions read 60 files for the index, not 121 * 60
    assert _SCANS_BEFORE_INDEX < 121
    assert words.scanned == _SCANS_BEFORE_INDEX * 60
    assert words.texts_indexed == 60


def test_indirect_binders_and_the_files_binding_a_name():
    texts = {
        "a.py": "from functools import partial\nf = partial(model.run, x)\n",
        "b.py": "class Sub(Base):\n    def __init__(self, x):\n        super().__init__(x)\n",
        "c.py": "class Sub(Base):\n    def __init__(self, x):\n        mysuper().__init__(x)\n",
        "d.py": "y = (A if c else Base)(x)\n",
        "e.py": "class Sub(Base):\n    def __init__(self):\n        super().__init__()\n",
    }
    assert indirect_binders(texts["a.py"]) == (frozenset({"run"}), frozenset())
    assert indirect_binders(texts["b.py"]) == (frozenset(), frozenset({"Base"}))
    assert indirect_binders(texts["c.py"]) == (frozenset(), frozenset())  # `mysuper` is not `super`
    assert indirect_binders(texts["e.py"]) == (frozenset(), frozenset())  # binds no argument
    words = CallWords(sorted(texts), texts)
    assert words.binding_indirectly("Base", plain=False) == ["b.py", "d.py"]
    assert words.binding_indirectly("Base", plain=True) == []
    assert words.binding_indirectly("A", plain=False) == ["d.py"]
    assert words.binding_indirectly("run", plain=True) == ["a.py"]


def test_super_rebound_is_the_regex_it_replaces():
    regex = re.compile(r"\bsuper\b\s*(?:=[^=]|:)|\b(?:as|import|def|class)\s+super\b")
    cases = [
        "super = 1", "super == 1", "super: int", "x = super()", "import x as super", "from m import super",
        "def super(x): pass", "class super: pass", "mysuper = 1", "super_ = 1", "classy super = 1",
        "alias super", "as\n\tsuper", "super =", "super\n= 1", "ssuper:", "def  super2(): pass",
    ]
    rng = random.Random(3)
    pieces = ["super", "as", "def", "class", "import", " ", "\n", "=", "==", ":", "x", "_", "("]
    cases += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    for text in cases:
        assert super_rebound(text) is (regex.search(text) is not None), text


def test_super_init_search_is_the_regex_it_replaces():
    from amplint.analysis.project.call_words import _calls_super_init

    regex = re.compile(r"\bsuper\s*\([^)]*\)\s*\.\s*__init__\s*\(\s*[^\s)]")
    rng = random.Random(4)
    pieces = ["super", "x", "(", ")", ".", "__init__", " ", "\n", "a", "_", ","]
    cases = ["super().__init__(x)", "xsuper().__init__(x)", "super(A, self) . __init__ ( x )", "super().__init__()"]
    cases += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(4000)]
    for text in cases:
        assert _calls_super_init(text) is (regex.search(text) is not None), text


class _Counting:
    """A compiled pattern that counts its searches."""

    def __init__(self, pattern):
        self.pattern, self.searched = pattern, 0

    def finditer(self, text):
        self.searched += 1
        return self.pattern.finditer(text)


def test_conditional_calls_are_searched_only_where_a_group_is_called(monkeypatch):
    # transformers-like modeling code: `else` everywhere, no `)(`: the two searches (`_if_called`'s
    # of `)(`, `else`) are not made; `(A if c else B)(x)` still binds both names
    import amplint.analysis.project.call_words as call_words

    counted = {name: _Counting(getattr(call_words, name)) for name in ("_GROUP_CALL", "_ELSE_CALLED")}
    for name, counting in counted.items():
        monkeypatch.setattr(call_words, name, counting)
    plain = ("def forward(self, x):\n    if self.training:\n        x = self.drop(x)\n"
             "    else:\n        x = x * 2\n    return self.proj(x)\n")
    assert indirect_binders(plain) == (frozenset(), frozenset())
    assert [c.searched for c in counted.values()] == [0, 0]
    grouped = "layer = (Linear if bias else NoBiasLinear)(dim, dim)\n"
    assert indirect_binders(grouped) == (frozenset(), frozenset({"Linear", "NoBiasLinear"}))
    assert [c.searched for c in counted.values()] == [1, 1]


def test_indirect_binders_of_random_texts_are_the_ungated_search():
    import amplint.analysis.project.call_words as call_words

    alphabet = _ALPHABET + ["if ", " else ", "else", ")(", ") (", "A", "(A if c else B)(x)"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        other = set()
        if "else" in text:
            other = {m.group(1).rsplit(".", 1)[-1] for m in call_words._ELSE_CALLED.finditer(text)
                     if not m.start() or not re.match(r"\w", text[m.start() - 1])}
            other |= {m.group(1).rsplit(".", 1)[-1] for m in call_words._IF_CALLED.finditer(text)}
        assert other <= indirect_binders(text)[1] or "super" in text
        if "super" not in text and "partial" not in text:
            assert indirect_binders(text)[1] == frozenset(other), text


def test_a_pass_asking_twenty_names_indexes_after_a_few_scans():
    """detectron2's pass asks the call sites of 19 names (Lightning's 20): each name scanned for
    read every file again until the index was built after 20 names, though the index costs a
    few scans (4 to 6 on the real trees). Shaped like detectron2's modeling/ and engine/."""
    names = ["build_model", "build_backbone", "build_resnet_backbone", "build_proposal_generator",
             "build_roi_heads", "build_anchor_generator", "build_box_head", "build_mask_head",
             "build_keypoint_head", "build_lr_scheduler", "build_optimizer", "build_detection_train_loader",
             "build_detection_test_loader", "get_norm", "c2_xavier_fill", "cat", "nonzero_tuple",
             "permute_to_N_HWA_K", "detector_postprocess"]
    texts = {}
    for i, name in enumerate(names):
        texts[f"detectron2/modeling/m{i}.py"] = (
            f"from detectron2.layers import cat\n\n\ndef {name}(cfg, input_shape=None):\n"
            f"    return {names[(i + 1) % len(names)]}(cfg, input_shape)\n"
        )
    texts["detectron2/engine/defaults.py"] = "def main(cfg):\n    model = build_model(cfg)\n    return model\n"
    paths = sorted(texts)
    words = CallWords(paths, texts)
    for name in names:
        assert words.files_calling(name) == [p for p in paths if calls(name, texts[p])]
    read = words.scanned + words.texts_indexed
    assert read <= 9 * len(paths), read // len(paths)  # a few scans and the index (before: 19 scans)


def test_a_text_is_read_at_most_five_times_however_many_names_are_asked():
    """The call index costs about 3.4 scans on the mixed monorepo tree (benchmarks/text_indexes.py),
    which asks 135 names: past 4 scans the index answers."""
    texts = {f"pkg/m{i}.py": f"def f{i}(x):\n    return g{i}(x)\n" for i in range(60)}
    words = CallWords(sorted(texts), texts)
    for i in range(20):
        assert words.files_calling(f"g{i}") == [f"pkg/m{i}.py"]
    assert words.scanned + words.texts_indexed <= 5 * 60


def _hinted_binders(text):
    """`indirect_binders` told what the call index knows of the text."""
    words = called_words(text)
    grouped = ")" in _reversed_called_words(text)
    return indirect_binders(text, any(word.endswith("partial") for word in words), "super" in words, grouped)


def test_the_call_index_holds_the_close_paren_where_a_text_holds_a_called_group():
    """`)` among a text's reversed called words: exactly where `\\)\\s*\\(` is written (the texts
    that may hold a conditional class call), the words themselves unchanged."""
    alphabet = _WIDE + [")(", ") (", ")\n(", ")\x1c(", ")\u3000(", "()", "(x)", ") x("]
    rng = random.Random(13)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(8000)]
    for text in texts + [")(", ") \t(", "f()(x)", "(a if c else B)(x)", "a) b("]:
        words = _reversed_called_words(text)
        assert (")" in words) is (_CALLED_GROUP.search(text) is not None), text
        assert words - {")"} == set(_REVERSED_CALL_WORDS.findall(text[::-1])), text


def test_texts_without_a_called_group_are_not_searched_for_a_conditional_call(monkeypatch):
    """Past the call index, `conditionally_called` reads only the texts holding `\\)\\s*\\(` (the
    mixed monorepo tree: 461 of its 5,338 texts), with the same binders."""
    import amplint.analysis.project.call_words as call_words

    texts = {f"m{i}.py": f"def f{i}(x):\n    return g(x) if x else h(x)\n" for i in range(20)}
    texts["cond.py"] = "def make(c, x):\n    return (Small if c else Large)(x)\n"
    texts["cond2.py"] = "def make(c, x):\n    return (Small if c else Large) (x)\n"
    searched = []
    monkeypatch.setattr(call_words, "conditionally_called",
                        lambda text, search=call_words.conditionally_called: searched.append(text) or search(text))
    words = CallWords(sorted(texts), texts)
    assert words.files_calling("g") == [f"m{i}.py" for i in sorted(range(20), key=lambda i: f"m{i}.py")]
    assert words.binding_indirectly("Large", plain=False) == ["cond.py", "cond2.py"]
    assert words.binding_indirectly("Small", plain=False) == ["cond.py", "cond2.py"]
    assert sorted(searched) == sorted([texts["cond.py"], texts["cond2.py"]])


def test_binders_told_what_the_text_calls_are_the_binders_searched_for():
    alphabet = _WIDE + ["partial", "functools.partial", "my_partial", "partial_", "super", "xsuper",
                        "().__init__(", "class ", "Sub", "(Base", "self.run", ",", " else ", "if ", ")(", ") (", "(A if c else B)(x)",
                        "else x.B)(", "(a.b if "]
    rng = random.Random(11)
    cases = [
        "f = partial(model.run, x)\n", "f = functools_partial (a.b, 1)\n", "partial_(a, b)\npartial\n(c, d)",
        "class Sub(Base):\n  def __init__(self, x):\n    super().__init__(x)\n",
        "class Sub(Base):\n  def __init__(self, x):\n    mysuper().__init__(x)\n",
        "class Sub(Base):\n  def f(self):\n    super  (Sub, self).__init__(x)\n",
    ]
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(6000)]
    for text in cases:
        assert _hinted_binders(text) == indirect_binders(text), text


def test_binders_are_searched_for_partial_and_super_only_where_the_call_index_finds_them(monkeypatch):
    """After the call index is built, a text that calls no word ending in `partial` is not
    searched for `partial(x.name, ...)`, and one that calls no `super` not for a subclass's
    `super().__init__(x)` (the mixed monorepo tree: 140 of its 5,338 texts call a `partial`). Shaped like
    fairseq's models/ (transformer layers, a `partial` in the checkpoint wrapper)."""
    import amplint.analysis.project.call_words as call_words

    texts = {f"fairseq/models/layer{i}.py": (
        f"import torch\n\n\n# no class here: super is nn.Module's\ndef layer{i}(x, dim):\n    return torch.nn.functional.gelu(x) * dim\n")
        for i in range(12)}
    texts["fairseq/modules/checkpoint_activations.py"] = (
        "import functools\n\n\ndef checkpoint_wrapper(m):\n"
        "    m.forward = functools.partial(_checkpointed_forward, m.forward)\n    return m\n")
    texts["fairseq/models/transformer_lm.py"] = (
        "from fairseq.models import BaseModel\n\n\nclass TransformerLanguageModel(BaseModel):\n"
        "    def __init__(self, decoder):\n        super().__init__(decoder)\n")
    counted = _Counting(call_words._PARTIAL_OF)
    monkeypatch.setattr(call_words, "_PARTIAL_OF", counted)
    searched_init = []
    monkeypatch.setattr(call_words, "_calls_super_init",
                        lambda text, search=call_words._calls_super_init: searched_init.append(text) or search(text))
    paths = sorted(texts)
    words = CallWords(paths, texts)
    for name in ["layer0", "layer1", "layer2", "layer3", "layer4", "gelu"]:  # the index is built
        words.files_calling(name)
    assert words.binding_indirectly("_checkpointed_forward", plain=True) == [
        "fairseq/modules/checkpoint_activations.py"]
    assert words.binding_indirectly("BaseModel", plain=False) == ["fairseq/models/transformer_lm.py"]
    assert counted.searched == 1
    assert searched_init == [texts["fairseq/models/transformer_lm.py"]]


def test_an_ascii_text_is_read_with_the_ascii_twins_to_the_same_words():
    """Every ASCII character (the controls `\\x1c`-`\\x1f` are Unicode whitespace, not ASCII
    `\\s`): the ASCII twins of the call and passed patterns find what the Unicode ones find."""
    from amplint.analysis.project.call_words import (
        _REVERSED_CALL, _REVERSED_CALL_ASCII, _REVERSED_COMMA, _REVERSED_COMMA_ASCII, passed_words,
    )

    alphabet = [chr(c) for c in range(128)] + ["ab", "(", "(", ",", ")", " (", "\x1c(", "x\x1f,"]
    rng = random.Random(12)
    cases = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20000)]
    for text in cases + ["".join(chr(c) + "(" for c in range(128)), "a\x1c\x1d\x1e\x1f(b\x0b,c\x0c)"]:
        backwards = text[::-1]
        assert _REVERSED_CALL_ASCII.findall(backwards) == _REVERSED_CALL.findall(backwards), text
        assert _REVERSED_COMMA_ASCII.findall(backwards) == _REVERSED_COMMA.findall(backwards), text
        assert called_words(text) == {m.group(1) for m in re.finditer(r"\b(\w+)\s*\(", text)}, text
        assert passed_words(text) == set(re.findall(r"[,)]\s*(\w+)", backwards)), text


def test_the_if_called_search_finds_what_finditer_finds():
    """`_if_called` tries `_IF_CALLED` only at the `(` before each `)\\s*(`: the same names, in
    the same order, as `finditer` (whose matches do not overlap: `(a if c else b)((d if e else f)(x))`
    finds `a` only, the second `(` being within the first match)."""
    from amplint.analysis.project.call_words import _IF_CALLED, _if_called

    alphabet = ["(", ")", "(", ")", " ", "\n", "\u3000", "if", " if ", "else", " else ", "a", "b.c", "é", "x1",
                ")(", ") (", "((", "))", ":", ",", "elif", "iff", "_"]
    rng = random.Random(17)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(30000)]
    texts += ["(a if c else b)((d if e else f)(x))", "(a if c else b)(x) + (d if e else f)(y)",
              "((a if c else b)(x))", "(a if (c) else b)(x)", "( m.A  if c else B ) ( x )", "(a if c)()", "(a if c)( )"]
    for text in texts:
        assert _if_called(text) == [m.group(1) for m in _IF_CALLED.finditer(text)], text
    assert _if_called("(a if c else b)((d if e else f)(x))") == ["a"]
    assert _if_called("(a if c else b)(x) + (d if e else f)(y)") == ["a", "d"]
