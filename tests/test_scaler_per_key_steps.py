"""A caller's loop over literal keys calls a method that steps the optimizer its key picks:
StarGANv2-VC's `MultiOptimizer.step(key)` (`keys = self.keys if key is None else [key]`, then
`self.scaler.step(self.optimizers[k])` for `k in keys`), called for each of the trainer's
sub-networks after one scaled backward. Composed at the call, the callee's loop runs once with
`k` the caller's key (facts/scaler_keys.py), so the caller's loop steps another optimizer each
iteration: an `update()` in the method runs between two optimizers' steps (AMP126), and one
`update()` after the caller's loop is GradScaler's multi-optimizer protocol (AMP121 silent, in the
method and at the call).

tests/projects/scaler_stargan_multioptimizer: yl4579/StarGANv2-VC layout (optimizers.py
MultiOptimizer/build_optimizer, trainer.py Trainer._train_epoch holding `self.optimizer`,
train.py main) in a fork that gives the MultiOptimizer one GradScaler.

Twins: the update moved after the per-key loop (silent); no update at all (AMP121).
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "scaler_stargan_multioptimizer"
OPTIMIZERS = f"{NAME}/optimizers.py"
TRAINER = f"{NAME}/trainer.py"
INNER_UPDATE = ("            self.scaler.update()\n", "")
OUTER_UPDATE = ("                self.optimizer.step(key=key)\n",
                "                self.optimizer.step(key=key)\n            self.optimizer.scaler.update()\n")


def findings(files, code):
    return sorted((f[0], f[1]) for f in code_findings(files, code)[0])


def one_file(files):
    """The three files as one module (the call graph, not the project pass, composes)."""
    text = "\n\n".join(files.pop(p) for p in sorted(files))
    text = text.replace("from optimizers import build_optimizer\n", "").replace("from trainer import Trainer\n", "")
    text = text.replace("    optimizer = build_optimizer(", "    optimizer = MultiOptimizer(").replace(
        "{key: model[key].parameters() for key in model})",
        "{key: AdamW(model[key].parameters()) for key in model}, torch.amp.GradScaler('cuda'))")
    return {f"{NAME}/train.py": text}


def test_update_inside_the_method_is_between_two_optimizers():
    assert findings(load(NAME), "AMP126") == [("trainer.py", 21)]


def test_one_update_after_the_per_key_loop_is_silent():
    files = load(NAME, (INNER_UPDATE, OUTER_UPDATE))
    assert findings(files, "AMP121") == []
    assert findings(files, "AMP126") == []


def test_never_updated_is_reported():
    assert findings(load(NAME, (INNER_UPDATE,)), "AMP121") != []


def test_one_file_variations():
    files = one_file(load(NAME))
    assert [code for code in ("AMP121", "AMP126") if findings(dict(files), code)] == ["AMP126"]
    twin = one_file(load(NAME, (INNER_UPDATE, OUTER_UPDATE)))
    assert findings(dict(twin), "AMP121") == [] and findings(dict(twin), "AMP126") == []


def test_a_call_without_the_key_steps_every_optimizer_of_an_unknown_list():
    """`self.optimizer.step()` leaves `key` at None: the loop runs over `self.keys`, whose length
    is not known here: no AMP126 (never guessed)."""
    files = load(NAME, (("            for key in (\"generator\", \"discriminator\"):\n"
                         "                self.optimizer.step(key=key)\n", "            self.optimizer.step()\n"),))
    assert findings(files, "AMP126") == []


def test_a_key_that_may_be_none_is_not_read_as_one_pass():
    """`step(key=pick(batch))`: the key may be None (every optimizer); the callee's loop is not
    taken to run once, so the caller's loop is not read as a per-key loop."""
    files = load(NAME, (("self.optimizer.step(key=key)", "self.optimizer.step(key=self.pick(key))"),))
    assert findings(files, "AMP126") == []


PER_KEY_METHOD = '''import torch


class MultiOptimizer:
    def __init__(self, optimizers, scaler):
        self.optimizers = optimizers
        self.keys = list(optimizers.keys())
        self.scaler = scaler

    def step(self, key=None):
        keys = [key] if key is not None else self.keys
        for k in keys:
            self.scaler.step(self.optimizers[k])
            self.scaler.update()


def train(enc, dec, loader):
    optimizer = MultiOptimizer({"enc": torch.optim.AdamW(enc.parameters()), "dec": torch.optim.AdamW(dec.parameters())},
                               torch.amp.GradScaler("cuda"))
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = dec(enc(x)).float().mean()
        optimizer.scaler.scale(loss).backward()
        for key in ("enc", "dec"):
            optimizer.step(key)
'''

HELPER_BY_NAME = '''import torch


def step_one(scaler, optimizers, name):
    scaler.step(optimizers[name])
    scaler.update()


def train(enc, dec, loader):
    optimizers = {"enc": torch.optim.AdamW(enc.parameters()), "dec": torch.optim.AdamW(dec.parameters())}
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = dec(enc(x)).float().mean()
        scaler.scale(loss).backward()
        for name in ("enc", "dec"):
            step_one(scaler, optimizers, name)
'''

INLINE = '''import torch


def train(enc, dec, loader):
    optimizers = {"enc": torch.optim.AdamW(enc.parameters()), "dec": torch.optim.AdamW(dec.parameters())}
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = dec(enc(x)).float().mean()
        scaler.scale(loss).backward()
        for key in ["enc", "dec"]:
            scaler.step(optimizers[key])
            scaler.update()
'''


def probe(text, code):
    return [f[1] for f in findings({"probe/probe.py": text}, code)]


def test_one_file_method_stepping_by_key():
    assert probe(PER_KEY_METHOD, "AMP126") == [25]
    # the method takes the key directly (StarGANv2-VC's `_step(key)`), no loop of its own
    direct = PER_KEY_METHOD.replace("        keys = [key] if key is not None else self.keys\n        for k in keys:\n"
                                    "            self.scaler.step(self.optimizers[k])\n            self.scaler.update()\n",
                                    "        self.scaler.step(self.optimizers[key])\n        self.scaler.update()\n")
    assert probe(direct, "AMP126") == [23]


def test_one_file_method_twin_updated_after_the_loop_is_silent():
    twin = PER_KEY_METHOD.replace("            self.scaler.update()\n", "").replace(
        "            optimizer.step(key)\n", "            optimizer.step(key)\n        optimizer.scaler.update()\n")
    assert probe(twin, "AMP121") == [] and probe(twin, "AMP126") == []
    # the same call with the key as a keyword, the test of the default turned round
    twin = twin.replace("optimizer.step(key)", "optimizer.step(key=key)").replace(
        "[key] if key is not None else self.keys", "self.keys if key is None else [key]")
    assert probe(twin, "AMP121") == []


def test_helper_function_passed_the_key():
    assert probe(HELPER_BY_NAME, "AMP126") == [17]
    twin = HELPER_BY_NAME.replace("    scaler.update()\n", "").replace(
        "            step_one(scaler, optimizers, name)\n", "            step_one(scaler, optimizers, name)\n        scaler.update()\n")
    assert probe(twin, "AMP121") == []


def test_inline_per_key_loop():
    assert probe(INLINE, "AMP126") == [13]
    # an unknown list of keys (a parameter) is never guessed to hold two
    assert probe(INLINE.replace('["enc", "dec"]', "keys").replace("loader):", "loader, keys):"), "AMP126") == []
    # a repeated key is one optimizer, stepped twice: not two optimizers' steps
    assert probe(INLINE.replace('["enc", "dec"]', '["enc", \'enc\']'), "AMP126") == []


def test_caller_with_a_local_instance_in_another_file():
    """The loop in a script holding the MultiOptimizer in a local (`optimizer =
    build_optimizer(...)`), the class in another file: the method's step is left to the
    script's update after the per-key loop (EntryCallerUpdate for a method called on a local)."""
    files = load(NAME, (INNER_UPDATE,))
    files.pop(TRAINER)
    files[f"{NAME}/train.py"] = '''import torch

from optimizers import build_optimizer


def main(loader, model):
    optimizer = build_optimizer({key: model[key].parameters() for key in model})
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model["discriminator"](model["generator"](batch)).float().mean()
        optimizer.scaler.scale(loss).backward()
        for key in ["generator", "discriminator"]:
            optimizer.step(key)
        optimizer.scaler.update()
'''
    assert findings(files, "AMP121") == []
    files[f"{NAME}/train.py"] = files[f"{NAME}/train.py"].replace("        optimizer.scaler.update()\n", "")
    assert findings(files, "AMP121") != []
