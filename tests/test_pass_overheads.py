"""Work counts of the project pass's fixed costs outside the class flow's questions (issue 34):
each test counts operations (not time) that grew with the size of a file or a tree before and
checks the answers stay those of the slower reading."""

import ast

from amplint.analysis.project import context_params


def _many_functions(count: int) -> str:
    lines = ["import contextlib", ""]
    for i in range(count):
        lines += [f"def helper{i}(x, ctx=None):", f"    y = [v for v in range({i})]", "    return x", ""]
    lines += ["def run(step, amp_autocast=contextlib.suppress):", "    with amp_autocast():",
              "        return step()", ""]
    lines += ["def other(lock):", "    lock = None", "    with lock:", "        pass", ""]
    return "\n".join(lines)


def test_param_withs_reads_rebound_names_only_of_functions_with_such_a_with(monkeypatch):
    calls = []
    walked = context_params.rebound_names
    monkeypatch.setattr(context_params, "rebound_names", lambda function: calls.append(function.name) or walked(function))
    for count in (0, 10, 40):
        calls.clear()
        found = context_params.param_withs(_many_functions(count))
        # `run`'s parameter opens the with; `other` binds `lock` again: nothing there
        assert found == [("run", "amp_autocast", 4 * count + 4, (4 * count + 5, 4 * count + 5))]
        assert sorted(calls) == ["other", "run"]  # not one walk per function of the file


def test_param_withs_finds_withs_in_every_kind_of_statement():
    text = (
        "def f(a, b, c, d, e):\n"
        "    try:\n        with a():\n            pass\n"
        "    except ValueError:\n        with b:\n            pass\n"
        "    else:\n        pass\n"
        "    finally:\n        with c():\n            pass\n"
        "    match d:\n        case 1:\n            with d():\n                pass\n"
        "    for _ in range(2):\n        if e:\n            with e():\n                pass\n"
        "    x = (lambda: 1)()\n"
        "class K:\n    with_ = 1\n    def m(self, g):\n        async def inner(h):\n            async with h():\n                pass\n"
        "        with g():\n            pass\n"
    )
    found = [(key, param) for key, param, _, _ in context_params.param_withs(text)]
    assert found == [("f", "a"), ("f", "b"), ("f", "c"), ("f", "d"), ("f", "e"), ("K.m.inner", "h"), ("K.m", "g")]
    ast.parse(text)


def _d2_like(scripts: int) -> dict:
    """detectron2's layout in small: the package, a project registering its own classes, and
    scripts importing both."""
    files = {
        "detectron2/__init__.py": "",
        "detectron2/modeling/__init__.py": "from .build import build_model\n",
        "detectron2/modeling/build.py": "def build_model(cfg):\n    return cfg\n",
        "projects/Mask/maskpkg/__init__.py": "from .arch import MaskArch\n",
        "projects/Mask/maskpkg/arch.py": "class MaskArch:\n    pass\n",
    }
    for i in range(scripts):
        files[f"projects/Mask/train_{i}.py"] = (
            "import os\nimport torch.nn as nn\nfrom detectron2.modeling import build_model\n"
            "import maskpkg\nfrom maskpkg.arch import MaskArch\nfrom .local import x\n")
    return files


def test_imported_beside_resolves_only_imports_that_are_not_project_modules(monkeypatch):
    from amplint.analysis.project import build, string_classes

    for scripts in (1, 8):
        project = build(_d2_like(scripts))
        asked = []
        resolve = project.resolve_ref
        monkeypatch.setattr(project, "resolve_ref", lambda path, ref, depth=0: asked.append(ref) or resolve(path, ref, depth),
                            raising=False)
        package = string_classes._package_root(project, "detectron2/modeling/build.py")
        other = string_classes._package_root(project, "projects/Mask/maskpkg/arch.py")
        assert string_classes._imported_beside(project, package, {other}) == {other}
        # `os` and `torch.nn` are asked once per script; the project's modules are read from its index
        assert sorted(set(asked)) == ["os", "torch.nn"] and len(asked) == 2 * scripts


def test_with_names_are_what_the_word_bounded_regex_finds():
    import random
    import re

    regex = re.compile(r"\bwith\s+([A-Za-z_]\w*)\s*(?:\(\s*\))?\s*:")
    rng = random.Random(4)
    alphabet = ["with", " ", "\n", "x", "_", "(", ")", ":", "é", "1", "\u3000", "wi", "th", "a"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25))) for _ in range(5000)]
    for text in texts + ["xwith a:", "with with_a:", "_with b():", "éwith c:", "with  d ( ) :"]:
        assert context_params.with_names(text) == set(regex.findall(text)), text


def test_config_keys_are_what_the_window_search_finds():
    import random
    import re

    from amplint.analysis.project.flowindex import _CONFIG_DICT, _config_pairs

    key = re.compile(r"(\w+)\s*=\s*\[?\s*$")

    def searched(text):
        found = []
        for match in _CONFIG_DICT.finditer(text):
            hit = key.search(text, max(0, match.start() - 200), match.start())
            if hit is not None:
                found.append((hit.group(1), match.group(1)))
        return found

    rng = random.Random(6)
    alphabet = ["a", "_", " ", "\n", "=", "[", "==", "x1", "é", "\t", "dict(type='A')", "dict( k=1, type=\"B.C\")"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    # a key word longer than the 200 characters read before the dict: cut where the window starts
    texts += ["x" * n + " = [\n  dict(type='Head')" for n in (1, 150, 196, 199, 200, 201, 260)]
    texts += [" " * n + "loss_bbox=dict(type='L1Loss')" for n in (0, 190, 205)]
    for text in texts:
        assert _config_pairs(text) == searched(text), text


def _converter_names_by_regex(texts):
    """converters._function_names as it read the texts before: a line-anchored regex over each
    text and a slice of the text per function body."""
    import re

    pattern = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)
    words = ("half", "Half", "float16", "bfloat16")
    defined, casting = set(), set()
    for text in texts:
        matches = list(pattern.finditer(text))
        casts = any(word in text for word in words)
        for index, match in enumerate(matches):
            defined.add(match.group(2))
            end = len(text)
            for later in matches[index + 1:]:
                if len(later.group(1)) <= len(match.group(1)):
                    end = later.start()
                    break
            if casts and any(word in text[match.end():end] for word in words):
                casting.add(match.group(2))
    return frozenset(defined), frozenset(casting)


def test_converter_names_are_the_line_regex_ones():
    import random
    import types

    from amplint.analysis.project import converters

    rng = random.Random(7)
    pieces = ["def f(", "def g (x):", "async def h(", "async\tdef k(", "asyncdef m(", "xdef n(", "def", "define(",
              "\n", "\n    ", "\n\t", " ", "half", "hal", "f", "Half", "bfloat16", "float16", "halfloat16", "(", "\r"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    # complete for the names some `.apply(name)` applies, the only ones asked about
    applies = "\nm.apply(f)\nm.apply(h)\nm.apply(k)\nm.apply(n)\n"
    asked = {"f", "h", "k", "n"}
    for text in texts:
        text += applies
        flow = types.SimpleNamespace(p=types.SimpleNamespace(python=["m.py"], files={"m.py": text}))
        found = converters._function_names(flow)
        expected = _converter_names_by_regex([text])
        assert [names & asked for names in found] == [names & asked for names in expected], text
    # projects of three files, the applied names (`m.apply(x.)` applies no name) in any of them
    pieces += ["m.apply(f)", "m.apply(g.h)", "m.apply(x.)", "def (", "undef f("]
    for _ in range(1500):
        files = {f"m{n}.py": "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for n in range(3)}
        flow = types.SimpleNamespace(p=types.SimpleNamespace(python=sorted(files), files=files))
        defined, casting = _converter_names_by_regex(list(files.values()))
        for path, text in files.items():
            expected = ".apply(" in text and any(
                name not in defined or name in casting
                for name in (m.group(1).rsplit(".", 1)[-1] for m in converters._APPLY.finditer(text)))
            assert converters.may_apply_converter(flow, text) == expected, files


def test_python_target_matches_are_the_patterns():
    import random

    from amplint.analysis.project import string_classes

    rng = random.Random(9)
    pieces = ["_target_", "'", '"', ":", "=", " ", "\n", "pkg.Net", "x", "_", "{", "dict(", "é", "_target_target_"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(20000)]
    texts += ["{'_target_': 'a.B'}", "dict(_target_='a.B')", "x_target_='a'", "'_target_'='a'", "\"_target_\" : \"m.N\""]
    for text in texts:
        expected = [(m.span(), m.group(1)) for m in string_classes._PY_TARGET.finditer(text)]
        assert [(m.span(), m.group(1)) for m in string_classes._py_targets(text)] == expected, text
