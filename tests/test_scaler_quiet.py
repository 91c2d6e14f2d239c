"""The protocol pass summarises a callee file only when a function it calls there may hold
GradScaler protocol events (amplint/analysis/project/scaler_quiet.py).

huggingface/transformers' `Trainer` (trainer.py) calls dozens of helpers imported from other
modules (`is_sagemaker_mp_enabled()` from utils/import_utils.py, `get_scheduler()` from
optimization.py, `nested_gather()` from trainer_pt_utils.py, ...). Their files hold a callee word
somewhere (a scheduler's `.step()`, `model.backward(loss)`, "clip"), so the protocol pass
parsed each with LibCST to learn that the called function has no event: 8 files, 3.1 s of a
30 s profiled project pass. Counted here in LibCST parses of the protocol pass, on a generated
project of that shape; the findings are those of the pass that summarises every callee."""

from __future__ import annotations

import os

import pytest

from project_files import PROJECTS, cli_findings, load

TRAINER = '''"""A Trainer shaped like huggingface/transformers' trainer.py: helpers from other modules."""
import torch

from .optimization import get_scheduler
from .steps import clip_and_step
from .trainer_utils import zero_grad_and_schedule
from .trainer_pt_utils import nested_gather, smp_forward_backward
from .utils.import_utils import is_sagemaker_mp_enabled
{imports}


class Trainer:
    def __init__(self, model, args, optimizer):
        self.model = model
        self.args = args
        self.optimizer = optimizer
        self.scheduler = get_scheduler(args.scheduler, optimizer)
        self.scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)

    def training_step(self, model, inputs):
        if is_sagemaker_mp_enabled():
            return smp_forward_backward(model, inputs)
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.args.fp16):
            loss = model(**inputs).loss
        self.scaler.scale(loss).backward()
        clip_and_step(model, self.optimizer, self.scaler, self.args.max_grad_norm)
        zero_grad_and_schedule(self.optimizer, self.scheduler)
{calls}        return nested_gather(loss.detach())
'''

STEPS = '''"""Clipping and stepping through the scaler (the helper whose events compose)."""
import torch


def clip_and_step(model, optimizer, scaler, max_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
'''

OPTIMIZATION = '''"""Schedulers (transformers' optimization.py): `.step()` here is a scheduler's or an
optimizer's, in functions the trainer does not call."""
from torch.optim.lr_scheduler import LambdaLR


def get_scheduler(name, optimizer, **kwargs):
    kwargs.update(last_epoch=-1)
    return LambdaLR(optimizer, lambda step: 1.0, **kwargs)


class LayerWiseDummyScheduler:
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def step(self):
        for optimizer in self.optimizers:
            optimizer.step()
'''

PT_UTILS = '''"""transformers' trainer_pt_utils.py: SageMaker's `model.backward(loss)` takes the loss."""
import torch


def nested_gather(tensor):
    return tensor.detach().cpu()


def smp_forward_backward(model, inputs):
    loss = model(**inputs)["loss"]
    model.backward(loss)
    return loss.detach()


def clip_values(values, low, high):
    return torch.clamp(values, low, high)
'''

TRAINER_UTILS = '''"""A callee the ast test keeps (a no-argument `.step()`), whose summary has no event
(a scheduler's step is no optimizer's): parsed for nothing, as before."""


def zero_grad_and_schedule(optimizer, scheduler):
    optimizer.zero_grad(set_to_none=True)
    scheduler.step()
'''

IMPORT_UTILS = '''"""transformers' utils/import_utils.py: availability checks. The old name is kept for
backward compatibility."""
import os


def is_sagemaker_mp_enabled():
    return "SM_HP_MP_PARAMETERS" in os.environ
'''

HELPER = '''"""Helper module {k} of the generated trainer: one function the trainer calls, one it
does not (a scheduler step: it may hold an event, but nothing asks for it)."""


def helper_{k}(value):
    return value


def schedule_{k}(scheduler):
    scheduler.step()
'''


def write_trainer(root, helpers: int) -> None:
    files = {
        "run_train.py": "from trainer.trainer import Trainer\n",
        "trainer/__init__.py": "",
        "trainer/utils/__init__.py": "",
        "trainer/steps.py": STEPS,
        "trainer/optimization.py": OPTIMIZATION,
        "trainer/trainer_pt_utils.py": PT_UTILS,
        "trainer/utils/import_utils.py": IMPORT_UTILS,
        "trainer/trainer_utils.py": TRAINER_UTILS,
        "trainer/trainer.py": TRAINER.format(
            imports="".join(f"from .helpers_{k} import helper_{k}\n" for k in range(helpers)),
            calls="".join(f"        helper_{k}(loss)\n" for k in range(helpers))),
    }
    for k in range(helpers):
        files[f"trainer/helpers_{k}.py"] = HELPER.format(k=k)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


@pytest.mark.parametrize("helpers", [0, 6])
def test_the_protocol_pass_parses_no_callee_whose_called_function_has_no_event(
        tmp_path, monkeypatch, helpers):
    """A cold `-j 1` run: AMP120 at trainer.py's call of steps.py's `clip_and_step`, which
    clips before any unscale (the helper's scaler is its parameter and it scales nothing, so
    the missing unscale is its caller's: the composed call reports it, r16b-scalerfp). The protocol pass parses only trainer_utils.py
    (kept by the ast test, no event in fact), however many helpers there are; the pass that
    summarised every callee parsed optimization.py, trainer_pt_utils.py, import_utils.py and
    every helper too. (steps.py, a caller, is summarised by the first pass.)"""
    from test_scaler_cross_file import counting_parses

    root = tmp_path / "trainer_gen"
    write_trainer(root, helpers)
    counts, _ = counting_parses(monkeypatch)
    findings = cli_findings(root, "--no-cache", "--jobs", "1", codes=("AMP12",))
    assert findings == [("trainer/trainer.py", 26 + helpers, "AMP120")]
    texts = {p.read_text(): str(p.relative_to(root)) for p in root.rglob("*.py")}
    parsed = sorted(texts[text] for text in counts["protocol"] if text in texts)
    assert parsed == ["trainer/trainer_utils.py"]


def _entries(files, keys_of):
    from amplint.analysis.engine import Settings
    from amplint.analysis.project import build
    from amplint.analysis.project.scaler_resolution import scaler_entries, text_may_hold
    from amplint.analysis.project.scaler_summaries import local_summaries

    project = build(files, Settings.default())
    asked = []

    def summarize(wanted, force):
        if force:
            asked.extend(wanted)
        return local_summaries(files, wanted, force)

    found = scaler_entries(project, sorted(files), summarize, may_hold=text_may_hold(files),
                           keys_of=keys_of)
    return found, sorted(asked)


def test_the_entries_are_those_of_the_pass_that_summarises_every_callee(tmp_path):
    from amplint.analysis.project.scaler_resolution import text_keys_of

    root = tmp_path / "trainer_gen"
    write_trainer(root, 3)
    files = {str(p.relative_to(tmp_path)): p.read_text() for p in root.rglob("*.py")}
    quiet, asked_quiet = _entries(files, text_keys_of(files))
    full, asked_full = _entries(files, None)
    assert quiet == full
    assert [e.callee for e in quiet["trainer_gen/trainer/trainer.py"]] == [
        "trainer/steps.py: clip_and_step"]
    # steps.py: called, with events, and summarised as a caller: `optimizer.zero_grad()` on its
    # parameter is a call to follow (a method of the instance it holds, if a project class)
    assert asked_quiet == ["trainer_gen/trainer/trainer_utils.py"]
    assert "trainer_gen/trainer/optimization.py" in asked_full  # parsed for nothing before


def _scaler_projects():
    names = []
    for name in sorted(os.listdir(PROJECTS)):
        files = load(name)
        if any("caler" in text or "unscale" in text for text in files.values()):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _scaler_projects())
def test_test_projects_entries_equal_without_the_ast_test(name):
    from amplint.analysis.project.scaler_resolution import text_keys_of

    files = load(name)
    assert _entries(files, text_keys_of(files))[0] == _entries(files, None)[0]


# -- protocol_keys: a superset of the functions a protocol summary holds ----------------------
KEPT = {
    "scaler methods": "def f(s, opt):\n    s.unscale_(opt)\n",
    "a scaler named otherwise": "import torch\ngs = torch.amp.GradScaler()\n\n"
                                "def f():\n    gs.update()\n",
    "optimizer step": "def f(opt):\n    opt.step()\n",
    "tensor backward with keywords": "def f(loss):\n    loss.backward(retain_graph=True)\n",
    "autograd backward": "import torch\n\ndef f(loss):\n    torch.autograd.backward(loss)\n",
    "autograd alias": "from torch.autograd import backward as bw\n\ndef f(loss):\n    bw(loss)\n",
    "clip alias": "from torch.nn.utils import clip_grad_norm_ as cg\n\ndef f(m):\n    cg(m.parameters(), 1.0)\n",
    "framework verb": "def f(accelerator, opt):\n    accelerator.unscale_gradients(opt)\n",
    "through a function": "def g(opt):\n    opt.step()\n\ndef f(opt):\n    g(opt)\n",
    "through self": "class C:\n    def g(self):\n        self.opt.step()\n\n    def f(self):\n        self.g()\n",
    "nested def": "def f(opt):\n    def g():\n        opt.step()\n    g()\n",
}
DROPPED = {
    "a step with an argument, no scaler": "def f(sched, epoch):\n    sched.step(epoch)\n",
    "dict update, no scaler": "def f(d):\n    d.update(a=1)\n",
    "a module's backward(loss)": "def f(model, loss):\n    model.backward(loss)\n",
    "not called": "def g(opt):\n    opt.step()\n\ndef f(opt):\n    return opt\n",
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_kept(name):
    from amplint.analysis.project.scaler_quiet import protocol_keys

    assert {"f", "C.f"} & protocol_keys(KEPT[name])


@pytest.mark.parametrize("name", sorted(DROPPED))
def test_dropped(name):
    from amplint.analysis.project.scaler_quiet import protocol_keys

    assert "f" not in protocol_keys(DROPPED[name])


def test_an_instance_call_reaching_a_forward_with_events_keeps_every_function():
    from amplint.analysis.project.scaler_quiet import protocol_keys

    text = ("class Step:\n    def __call__(self, opt):\n        opt.step()\n\n"
            "step = Step()\n\ndef f(opt):\n    step(opt)\n")
    assert protocol_keys(text) is None
    assert protocol_keys("def f(:\n    opt.step()\n") is None  # `ast` cannot tell
    # ... unless no call of it can keep a function (no event name in its code): no summary
    # of it can hold an event either (test_scaler_keys_unparsed.py)
    assert protocol_keys("def f(:\n") == frozenset()


def _superset_files():
    import importlib.util

    roots = [PROJECTS]
    for package in ("accelerate", "lightning"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:  # installed here
            roots.extend(spec.submodule_search_locations)
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(".py"):
                    yield os.path.join(folder, name)


def test_protocol_keys_hold_every_summarised_function():
    """On the test projects and the installed accelerate and Lightning: every function key a
    protocol summary (`force=True`) holds is among `protocol_keys`, and some are dropped."""
    from amplint.analysis.facts import FileFacts
    from amplint.analysis.parsing import parse
    from amplint.analysis.project.scaler_quiet import protocol_keys
    from amplint.analysis.project.scaler_summaries import CALLEE_WORDS, summarize_scaler

    checked = dropped = 0
    for path in _superset_files():
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if not any(word in text for word in CALLEE_WORDS):
            continue
        keys = protocol_keys(text)
        module = parse(text)
        summarised = set(summarize_scaler(path, module, FileFacts(module), True).functions)
        if keys is not None:
            assert summarised <= keys, path
            dropped += sum(1 for f in FileFacts(module).tree.frames if f.kind == "function") - len(keys)
        checked += 1
    assert checked > 20 and dropped > 100
