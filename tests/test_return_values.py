"""Values a project function of another file returns to its caller (issue 26):
amplint/analysis/project/return_values.py answers what every `return` of the callee agrees on,
facts/returned_values.py carries it into the caller's file (EntryReturn).

- tests/projects/return_moco_optimizers: facebookresearch/moco-v3 layout (main_moco.py,
  moco/builder.py, moco/optimizer.py with LARS); a fork's `moco.optimizer.build_optimizers`
  returns a tuple (LARS for the encoder, SGD for the predictor) and main_moco.py calls
  `scaler.update()` inside the loop that steps each of them: AMP126.
- tests/projects/return_hifigan_clipper: jik876/hifi-gan layout (train.py, models.py, utils.py,
  env.py); `utils.grad_clipper(h)` returns `functools.partial(clip_grad_norm_, max_norm=...)`
  and train.py clips the generator's scaled gradients with it before `scaler.step`: AMP120.

Each clean twin (the fix, or a callee whose returns do not agree) stays silent: nothing is
guessed about a value the callee does not return on every path.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project.return_values import function_returns

from project_files import code_findings, load

MOCO = "return_moco_optimizers"
HIFIGAN = "return_hifigan_clipper"
UPDATE_AFTER_LOOP = (
    "                scaler.step(optimizer)\n                scaler.update()\n",
    "                scaler.step(optimizer)\n            scaler.update()\n",
)
UNSCALE_FIRST = (
    "            clip(generator.parameters())\n",
    "            scaler.unscale_(optim_g)\n            clip(generator.parameters())\n",
)


def test_a_tuple_of_optimizers_returned_by_another_file_is_stepped_with_an_update_between():
    found, results = code_findings(load(MOCO), "AMP126")
    assert found == [("main_moco.py", 34, "AMP126")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP126"]
    assert "each of the 2 optimizers of `optimizers`" in message
    assert "returned by `build_optimizers` at moco/optimizer.py" in message
    # the other end by path:line: the callee's `def`
    assert "(returned by `build_optimizers` at moco/optimizer.py:35)" in message


def test_moco_twin_updating_after_the_loop_is_silent():
    files = load(MOCO, [UPDATE_AFTER_LOOP])
    assert "            scaler.update()\n            if i" in files[f"{MOCO}/main_moco.py"]
    assert code_findings(files, "AMP126")[0] == []


def test_a_returned_container_of_unknown_length_is_not_guessed():
    files = load(MOCO, [(
        "    return backbone, head\n",
        "    optimizers = [backbone]\n    if args.lr > 1:\n        optimizers.append(head)\n"
        "    return optimizers\n",
    )])
    assert code_findings(files, "AMP126")[0] == []
    files = load(MOCO, [("    return backbone, head\n",
                         "    if args.lr > 1:\n        return backbone, head\n    return backbone, backbone\n")])
    assert code_findings(files, "AMP126")[0] == []


def test_a_partial_of_clip_grad_norm_returned_by_another_file_clips_scaled_gradients():
    found, results = code_findings(load(HIFIGAN), "AMP120")
    assert found == [("train.py", 42, "AMP120")]
    # two optimizers stepped by the scaler: which to unscale is not ours to pick (no fix)
    assert not any(d.fix for r in results.values() for d in r.diagnostics if d.code == "AMP120")


def test_hifigan_twin_unscaling_first_is_silent():
    files = load(HIFIGAN, [UNSCALE_FIRST])
    assert code_findings(files, "AMP120")[0] == []


def test_a_helper_whose_returns_disagree_or_bind_positionals_is_not_followed():
    for old, new in [
        ("    return functools.partial(clip_grad_norm_, max_norm=h.grad_clip)\n",
         "    if h.grad_clip:\n        return functools.partial(clip_grad_norm_, max_norm=h.grad_clip)\n"
         "    return print\n"),
        ("functools.partial(clip_grad_norm_, max_norm=h.grad_clip)",
         "functools.partial(clip_grad_norm_, h.params, max_norm=h.grad_clip)"),
        ("def grad_clipper(h):\n", "@functools.lru_cache()\ndef grad_clipper(h):\n"),
    ]:
        files = load(HIFIGAN, [(old, new)])
        assert new in files[f"{HIFIGAN}/utils.py"]
        assert code_findings(files, "AMP120")[0] == [], new


def test_the_caller_alone_is_silent():
    files = load(HIFIGAN)
    result = lint_source("train.py", files[f"{HIFIGAN}/train.py"], Settings.default())
    assert not [d for d in result.diagnostics if d.code == "AMP120"]


def test_function_returns_answers_only_what_every_path_returns():
    text = (
        "import functools\n"
        "import torch\n"
        "from torch.nn.utils import clip_grad_norm_ as cgn\n"
        "from .local import helper\n"
        "def a(h):\n    return functools.partial(torch.nn.utils.clip_grad_value_, clip_value=h)\n"
        "def b(h):\n    return cgn\n"
        "def c(m):\n    x = m.a\n    y = m.b\n    return [x, y]\n"
        "def d(m):\n    return [m.a, m.a]\n"
        "def e(h):\n    if h:\n        return cgn\n"
        "def f(h):\n    return helper\n"
        "def g(torch):\n    return torch.nn.utils.clip_grad_norm_\n"
        "def h(x):\n    yield x\n    return cgn\n"
        "def i(x):\n    return functools.partial(torch.autocast, dtype=x)\n"
        "def j(x):\n    def inner():\n        return 1\n    return cgn\n"
    )
    got = {key: function_returns("m.py", text, key) for key in "abcdefghij"}
    assert got == {
        "a": ("torch.nn.utils.clip_grad_value_", 0, 5), "b": ("torch.nn.utils.clip_grad_norm_", 0, 7),
        "c": ("", 2, 9), "d": None, "e": None, "f": None, "g": None, "h": None, "i": None,
        "j": ("torch.nn.utils.clip_grad_norm_", 0, 27),
    }


def test_returns_are_read_only_for_calls_whose_value_is_called_or_looped_over(monkeypatch):
    from amplint.analysis.project import scaler_resolution

    asked = []
    real = scaler_resolution.function_returns

    def counting(path, text, key):
        asked.append((path.rsplit("/", 1)[-1], key))
        return real(path, text, key)

    monkeypatch.setattr(scaler_resolution, "function_returns", counting)
    code_findings(load(HIFIGAN), "AMP120")
    assert asked == [("utils.py", "grad_clipper")]
    asked.clear()
    files = load(HIFIGAN, [("            clip(generator.parameters())\n", "")])
    assert code_findings(files, "AMP120")[0] == []
    assert asked == []  # `clip` is never called: its value is not asked for
