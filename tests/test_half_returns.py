"""AMP103 across files through a factory's return (amplint/analysis/project/half_returns.py): a
function, classmethod or a chain of them returns the model it casts to half, and the caller
runs the returned value under an autocast region of its own.

tests/projects/half_clip_load: openai/CLIP layout (clip/clip.py `load()`, clip/model.py `CLIP`
and `build_model`) with a fine-tuning script of the kind its users write (finetune.py: the
model from `clip.load(...)` trained under `torch.autocast` with a GradScaler). CLIP's own `load`
converts the weights to fp16 for GPU inference; in this fork it does so under `if half:` (on by
default) and the model class gets a classmethod `from_checkpoint` that ends in `.half()`.
Twins: the caller passes `half=False`; no autocast in the script; the model only evaluated
outside the region; a factory that casts a different local than the one it returns.
"""

from __future__ import annotations

from amplint.analysis.diagnostics import Severity

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "half_clip_load"
LOAD = ("clip/clip.py", 15, "AMP103")
CLASSMETHOD = ("clip/model.py", 40, "AMP103")
CALL = "    model = clip.load(args.model, device=device)\n"
NO_REGION = ('            with torch.autocast("cuda", dtype=torch.float16):\n', "            if True:\n")


def amp103(files):
    return code_findings(files, "AMP103")


def test_model_halved_in_the_factory_and_trained_under_autocast_by_the_caller():
    found, results = amp103(load(NAME))
    assert found == [LOAD]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "`load` returns it to `clip.load(args.model, device=device) at finetune.py:11`" in diag.message
    assert "autocast region at finetune.py:18" in diag.message
    assert diag.severity is Severity.ERROR  # the caller's file makes the GradScaler


def test_twin_the_caller_turns_the_half_flag_off_is_silent():
    files = load(NAME, ((CALL, "    model = clip.load(args.model, device=device, half=False)\n"),))
    assert amp103(files)[0] == []
    positional = load(NAME, ((CALL, "    model = clip.load(args.model, device, False)\n"),))
    assert amp103(positional)[0] == []
    on = load(NAME, ((CALL, "    model = clip.load(args.model, device, True)\n"),))
    assert amp103(on)[0] == [LOAD]


def test_twin_no_autocast_in_the_caller_is_silent():
    assert amp103(load(NAME, (NO_REGION,)))[0] == []


def test_twin_the_returned_model_only_evaluated_outside_the_region_is_silent():
    files = load(NAME, (("logits_per_image, logits_per_text = model(images, texts)",
                         "logits_per_image, logits_per_text = torch.ones(2, 2), torch.ones(2, 2)"),))
    assert amp103(files)[0] == []


def test_a_cast_of_another_local_than_the_returned_one_is_not_taken():
    files = load(NAME, (("        model.half()\n", "        state_dict = {k: v.half() for k, v in state_dict.items()}\n"),))
    assert amp103(files)[0] == []


def test_a_cast_the_factory_undoes_before_its_return_is_not_taken():
    """`model = model.half()` then `model = model.float()` (a checkpoint read in fp16, the model
    run in fp32): the local it returns is float32; the twin without the cast back is reported."""
    cast = "        model.half()\n    return model.to(device)\n"
    assert amp103(load(NAME, ((cast, "        model = model.half()\n    return model\n"),)))[0] == [LOAD]
    undone = (cast, "        model = model.half()\n    model = model.float()\n    return model\n")
    assert amp103(load(NAME, (undone,)))[0] == []


def test_classmethod_constructor_that_returns_the_half_model():
    files = load(NAME, ((CALL, "    model = CLIP.from_checkpoint(torch.load(args.checkpoint))\n"),
                        ("import clip\n", "import clip\nfrom clip.model import CLIP\n")))
    assert amp103(files)[0] == [CLASSMETHOD]


def test_a_chain_of_factories_reaches_the_cast_and_a_held_model_called_as_self_attribute():
    """`load` -> `build_model` halving it (the cast now in model.py), stored as `self.model` by
    a trainer class and called as `self.model(...)` in the method that opens the region."""
    files = load(NAME, (("        model.half()\n", "        pass\n"),
                        ("    return model.eval()\n", "    return model.half()\n")))
    files[f"{NAME}/finetune.py"] = (
        "import torch\n"
        "import torch.nn.functional as F\n\n"
        "import clip\n\n\n"
        "class Trainer:\n"
        "    def __init__(self, args):\n"
        "        self.model = clip.load(args.model)\n"
        "        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.lr)\n\n"
        "    def step(self, images, texts):\n"
        "        with torch.autocast(\"cuda\", dtype=torch.float16):\n"
        "            logits, _ = self.model(images, texts)\n"
        "            loss = F.cross_entropy(logits, torch.arange(len(images), device=images.device))\n"
        "        loss.backward()\n"
        "        self.optimizer.step()\n"
    )
    found, results = amp103(files)
    assert found == [("clip/model.py", 49, "AMP103")]
    (diag,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "`build_model` returns it to `clip.load(args.model) at finetune.py:9`" in diag.message
    assert diag.severity is Severity.WARNING  # no GradScaler in the caller's file


def test_warm_run_after_editing_only_the_caller(tmp_path):
    """The finding is in clip/clip.py, decided by finetune.py: a cached result of clip.py is not
    used again once the caller's region is gone."""
    assert_warm_run_follows_an_edit(tmp_path, NAME, "finetune.py", (NO_REGION,), "AMP103", [LOAD])
