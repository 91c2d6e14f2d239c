"""A dtype a class keeps from its constructor parameter is what every construction of the
project passes (issue 26, "what an attribute holds"; amplint/analysis/project/init_dtypes.py,
read as the class's dtype by class_dtype_entries.py).

tests/projects/initdtype_nanogpt: karpathy/nanoGPT's layout (model.py GPT, train.py's loop with
`ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype)` and a GradScaler), in a fork
that keeps the loop in trainer.py's `Trainer(model, optimizer, device_type="cuda",
ptdtype=torch.float16)`: it stores `self.ptdtype = ptdtype`, opens
`torch.autocast(device_type="cuda", dtype=self.ptdtype)` and builds an always-enabled GradScaler;
train.py builds `Trainer(model, optimizer, ptdtype=torch.bfloat16)`. Every region of trainer.py
runs in bfloat16 and the scaler only adds its sync and skipped steps (AMP124; on main the
attribute was no dtype). Clean twin: train.py passes torch.float16.
"""

from __future__ import annotations

import sys

import pytest

from project_files import code_findings, load
from amplint.analysis.engine import Settings

NAME = "initdtype_nanogpt"
FOUND = [("trainer.py", 13, "AMP124")]
BUILT = "Trainer(model, optimizer, ptdtype=torch.bfloat16)"
MAIN = "\n\nif __name__ == \"__main__\":\n"


def _amp124(replace=()):
    return code_findings(load(NAME, replace), "AMP124", Settings.default())[0]


def test_the_dtype_every_construction_passes_is_the_region_dtype():
    assert _amp124() == FOUND
    assert _amp124(((BUILT, "Trainer(model, optimizer, 'cuda', torch.bfloat16)"),)) == FOUND


def test_clean_twin_a_float16_construction_is_silent():
    assert _amp124(((BUILT, "Trainer(model, optimizer, ptdtype=torch.float16)"),)) == []


def test_a_construction_that_leaves_it_out_reads_the_default():
    assert _amp124(((BUILT, "Trainer(model, optimizer)"),)) == []
    assert _amp124(((BUILT, "Trainer(model, optimizer)"),
                    ("ptdtype=torch.float16, grad_clip", "ptdtype=torch.bfloat16, grad_clip"))) == FOUND


def test_constructions_that_disagree_leave_it_unknown():
    second = MAIN.replace("\n\nif", "\n\ndef evaluate(model, optimizer):\n"
                          "    return Trainer(model, optimizer, ptdtype=torch.float16)\n\n\nif")
    assert _amp124(((MAIN, second),)) == []
    star = MAIN.replace("\n\nif", "\n\ndef resume(model, optimizer, kw):\n"
                        "    return Trainer(model, optimizer, **kw)\n\n\nif")
    assert _amp124(((MAIN, star),)) == []


def test_another_store_of_the_attribute_leaves_it_unknown():
    store = "        trainer.step(X, Y)\n"
    assert _amp124(((store, store + "        trainer.ptdtype = torch.float16\n"),)) == []


def test_a_store_by_a_computed_name_leaves_it_unknown():
    """nanoGPT's configurator overrides settings from the command line; a fork that keeps them on
    the trainer writes `setattr(trainer, key, value)` (`--ptdtype=float16` on a V100): the
    attribute may then hold float16 and the scaler is needed. Twin: a setattr of another
    attribute named as written leaves the finding."""
    made = "    trainer = Trainer(model, optimizer, ptdtype=torch.bfloat16)\n"
    loop = made + "    for key, value in OVERRIDES.items():\n        setattr(trainer, key, value)\n"
    assert _amp124(((made, loop),)) == []
    through_dict = made + "    trainer.__dict__.update(OVERRIDES)\n"
    assert _amp124(((made, through_dict),)) == []
    named = made + "    setattr(trainer, 'grad_clip', 0.5)\n"
    assert _amp124(((made, named),)) == FOUND


def test_a_class_built_another_way_leaves_it_unknown():
    # passed on as a value, subclassed, named in a string (a registry, getattr)
    for extra in ("\n\nTRAINERS = {'default': Trainer}\n",
                  "\n\nclass FP16Trainer(Trainer):\n    pass\n",
                  "\n\nTRAINER_NAME = 'Trainer'\n"):
        assert _amp124(((MAIN, extra + MAIN),)) == [], extra


def test_the_parameter_rebound_in_init_leaves_it_unknown():
    store = "        self.ptdtype = ptdtype\n"
    assert _amp124(((store, "        ptdtype = ptdtype or torch.float16\n" + store),)) == []


def test_torch_runs_the_region_in_bfloat16(tmp_path):
    """The premise under torch 2.13 on CPU: the construction's bfloat16 reaches the autocast
    through `self.ptdtype`, and the loss the scaler scales is computed from bfloat16 logits."""
    torch = pytest.importorskip("torch")
    root = tmp_path / NAME
    on_cpu = (('device_type="cuda", dtype', 'device_type="cpu", dtype'),
              ("torch.amp.GradScaler(device_type)", "torch.amp.GradScaler(device_type, enabled=False)"))
    for path, text in load(NAME, on_cpu).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    sys.path.insert(0, str(root))
    try:
        for name in ("model", "trainer", "train"):
            sys.modules.pop(name, None)
        import model as model_module
        import trainer as trainer_module

        net = model_module.GPT()
        trainer = trainer_module.Trainer(net, torch.optim.AdamW(net.parameters()), device_type="cpu",
                                         ptdtype=torch.bfloat16)
        seen = []
        net.lm_head.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
        x = torch.randint(0, 64, (2, 8))
        trainer.step(x, x)
        assert seen == [torch.bfloat16]
    finally:
        sys.path.remove(str(root))
        for name in ("model", "trainer", "train"):
            sys.modules.pop(name, None)
