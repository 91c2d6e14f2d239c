"""A subclass's `self.m(...)` keeps its file for a question about a base's method `m` only when
it may run that base's `m` (round 49): a class whose own body defines `def m` runs its own
override there, whatever it derives from, so its file is spared (site_text.in_class_defining);
and the alias scan behind the answer (`_renamed`) reads each class name once per pass.
Counted, not timed.

A project laid out like facebookresearch/fairseq: `fairseq/tasks/fairseq_task.py`'s FairseqTask
defines `build_generator(self, models, args)` and calls it from `valid_step`;
`translation.py`'s TranslationTask overrides `build_generator` and calls its own
`self.build_generator([model], args)` in `valid_step`; `language_modeling.py`'s
LanguageModelingTask does not override it and calls `self.build_generator(models, args)` in
`eval_lm`, which runs FairseqTask's (kept); `translation_multi_simple_epoch.py` derives from
TranslationTask and calls `self.build_generator(...)` without defining it (kept for
TranslationTask's question); `hub_utils.py`'s GeneratorHubInterface calls
`self.build_generator(...)` of an unrelated class (no store, no base of the hierarchy)."""

from __future__ import annotations

import pytest

from amplint.analysis.project import build
from amplint.analysis.project import site_files
from amplint.analysis.project.site_files import SiteFiles
from amplint.analysis.project.site_text import CodeText

TASK = """import torch


class FairseqTask:
    def build_generator(self, models, args, extra_gen_cls_kwargs=None):
        return models[0]

    def valid_step(self, sample, model, criterion):
        with torch.no_grad():
            generator = self.build_generator([model], None)
            return criterion(generator, sample)
"""
TRANSLATION = """from fairseq.tasks.fairseq_task import FairseqTask


class TranslationTask(FairseqTask):
    def build_generator(self, models, args, seq_gen_cls=None):
        return models[-1]

    def valid_step(self, sample, model, criterion):
        generator = self.build_generator([model], self.args)
        return criterion(generator, sample)
"""
LANGUAGE_MODELING = """from fairseq.tasks.fairseq_task import FairseqTask


class LanguageModelingTask(FairseqTask):
    def eval_lm(self, models, sample):
        generator = self.build_generator(models, None)
        return generator(sample)
"""
MULTI = """from fairseq.tasks.translation import TranslationTask


class TranslationMultiSimpleEpochTask(TranslationTask):
    def inference_step(self, models, sample):
        generator = self.build_generator(models, None)
        return generator(sample)
"""
HUB = """class GeneratorHubInterface:
    def generate(self, models, sample):
        generator = self.build_generator(models, None)
        return generator(sample)
"""
ROOT = "fairseq/tasks"


def _files():
    return {
        "fairseq/__init__.py": "", f"{ROOT}/__init__.py": "",
        f"{ROOT}/fairseq_task.py": TASK, f"{ROOT}/translation.py": TRANSLATION,
        f"{ROOT}/language_modeling.py": LANGUAGE_MODELING,
        f"{ROOT}/translation_multi_simple_epoch.py": MULTI, "fairseq/hub_utils.py": HUB,
    }


def _question(path: str, key: str) -> tuple:
    return ("bind", (path, key), False)


def test_an_override_s_own_call_is_spared_and_an_inherited_call_is_kept():
    project = build(_files())
    flow = project.flow
    # what the sparing relies on: the class flow reads each `self.build_generator` as the
    # caller's class's own method, else its nearest base's
    assert set(flow.values(f"{ROOT}/translation.py", "TranslationTask.valid_step", ("self", "build_generator"))) \
        == {("func", f"{ROOT}/translation.py", "TranslationTask.build_generator")}
    assert set(flow.values(f"{ROOT}/language_modeling.py", "LanguageModelingTask.eval_lm",
                           ("self", "build_generator"))) \
        == {("func", f"{ROOT}/fairseq_task.py", "FairseqTask.build_generator")}
    sites = SiteFiles(flow, None)
    base = _question(f"{ROOT}/fairseq_task.py", "FairseqTask.build_generator")
    assert not sites.may_reach(f"{ROOT}/translation.py", "build_generator", base, False)
    assert sites.own_methods == 1
    assert sites.may_reach(f"{ROOT}/language_modeling.py", "build_generator", base, False)
    assert sites.may_reach(f"{ROOT}/translation_multi_simple_epoch.py", "build_generator", base, False)
    assert not sites.may_reach("fairseq/hub_utils.py", "build_generator", base, False)
    # the override's file answers every question alike: read once per (file, name)
    assert sites.reaches_own_only(f"{ROOT}/translation.py", "build_generator", False)
    assert not sites.reaches_own_only(f"{ROOT}/language_modeling.py", "build_generator", False)


def test_the_call_sites_of_the_base_s_method_leave_out_the_override_s_caller():
    flow = build(_files()).flow
    sites = flow._call_sites("build_generator", _question(f"{ROOT}/fairseq_task.py", "FairseqTask.build_generator"))
    keys = {(path, key) for path, key, _, _, _ in sites}
    assert (f"{ROOT}/language_modeling.py", "LanguageModelingTask.eval_lm") in keys
    assert (f"{ROOT}/translation.py", "TranslationTask.valid_step") not in keys


def test_each_class_name_is_scanned_for_an_alias_once_per_pass(monkeypatch):
    scanned = []
    real = site_files.renamed

    def counting(project, names):
        scanned.extend(sorted(names))
        return real(project, names)

    monkeypatch.setattr(site_files, "renamed", counting)
    sites = SiteFiles(build(_files()).flow, None)
    for path, key in ((f"{ROOT}/fairseq_task.py", "FairseqTask.build_generator"),
                      (f"{ROOT}/translation.py", "TranslationTask.build_generator")):
        assert not sites.may_reach("fairseq/hub_utils.py", "build_generator", _question(path, key), False)
    assert sorted(scanned) == sorted(set(scanned))
    assert set(scanned) == {"FairseqTask", "TranslationTask", "LanguageModelingTask", "TranslationMultiSimpleEpochTask"}


OWN = "class K(Base):\n    def m(self, x):\n        return x\n\n    def go(self, x):\n        return self.m(x)\n"


@pytest.mark.parametrize("text, own", [
    (OWN, True),
    ("@register\n" + OWN, True),
    (OWN.replace("    def m(", "    @torch.no_grad()\n    def m("), True),
    (OWN.replace("    def m(", "    async def m("), True),
    # a property's value is what it returns
    (OWN.replace("    def m(", "    @property\n    def m("), False),
    (OWN.replace("    def m(", "    @functools.cached_property\n    def m("), False),
    # not the class's own method: nested in a branch, in another class, in a method
    (OWN.replace("    def m(self, x):\n        return x\n", "    if FLAG:\n        def m(self, x):\n            return x\n"), False),
    (OWN.replace("    def m(self, x):\n        return x\n", "    def build(self):\n        def m(x):\n            return x\n"), False),
    ("class J:\n    def m(self, x):\n        return x\n\n\n" + OWN.replace("def m(", "def n("), False),
    # `self` is another object there: a nested class's method, a nested def or lambda of its own `self`
    (OWN + "\n    class Inner(Base):\n        def step(self, x):\n            return self.m(x)\n", False),
    (OWN.replace("        return self.m(x)\n", "        def inner(self):\n            return self.m(x)\n        return inner\n"), False),
    (OWN.replace("        return self.m(x)\n", "        f = lambda self: self.m(x)\n        return f\n"), False),
    # a closure's `self` is the method's
    (OWN.replace("        return self.m(x)\n", "        def inner():\n            return self.m(x)\n        return inner()\n"), True),
    # the text cannot tell: the class written twice, a triple-quoted f-string
    (OWN + "\n\n" + OWN, False),
    ('T = f"""\n{x}\n"""\n\n' + OWN, False),
    # a mention at module level (the last one is read)
    (OWN + "\n\nK().m(1)\nself.m(2)\n", False),
])
def test_an_own_method_is_told_from_the_text(text, own):
    view = CodeText(text)
    position = text.rindex("self.m(") + len("self.")
    assert view.in_class_defining(position, "m") is own
    if own:  # what the class flow reads for `self.m` there: the class's own method
        path = "pkg/k.py"
        project = build({path: text})
        held = project.flow.values(path, "K.go", ("self", "m"))
        assert set(held) == {("func", path, "K.m")}
