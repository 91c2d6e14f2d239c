"""The project pass's `files` view (run/project_inputs._KeyedLazy): read ~80,000 times through
`get` on the mixed monorepo tree (the scaler's callee-file test, the registry search, the call
index), so `get` and `in` are its own, not Mapping's `try: self[path]` mixins; they answer as
those did and read the same texts (the texts read decide which first-pass trees the lint after
the pass keeps)."""

from __future__ import annotations

from collections.abc import Mapping

from amplint.run.project_inputs import _KeyedLazy, _LazyTexts


class _Counted(_KeyedLazy):
    items_asked = 0

    def __getitem__(self, path):
        _Counted.items_asked += 1
        return super().__getitem__(path)


def test_get_and_in_answer_as_the_mapping_mixins_and_read_the_same_texts(tmp_path):
    paths = []
    for name, text in (("train.py", "import torch\n"), ("models/net.py", "class Net: pass\n"),
                       ("configs/amp.yaml", "amp: true\n")):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    missing = str(tmp_path / "gone.py")  # a key whose file is unreadable: "" as before
    keys = paths[:2] + [missing]
    asked = keys + [paths[2], str(tmp_path / "other.py")]  # (the last two: not keys)

    own, mixin = _Counted(keys, _LazyTexts()), _KeyedLazy(keys, _LazyTexts())
    for path in asked:
        assert own.get(path, "-") == Mapping.get(mixin, path, "-")
        assert (path in own) == Mapping.__contains__(mixin, path)
    assert own.read() == mixin.read() and set(own.read()) == set(keys)
    assert own.get(missing) == "" and own.get(paths[2]) is None
    assert _Counted.items_asked == 0  # on start: Mapping.get and `in` ask `self[path]`
