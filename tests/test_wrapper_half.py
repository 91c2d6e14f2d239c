"""AMP103 for a wrapper module that halves the module it holds in its `__init__`, when a method
of the wrapper that runs that module is reached by an autocast region of another file.

tests/projects/wrapper_half_deepspeed is laid out like microsoft/DeepSpeed (deepspeed/runtime/
engine.py `DeepSpeedEngine`, which stores the user's model as `self.module` and halves it in place
when fp16 is on, `forward` running `self.module(...)`) with a CIFAR example under
examples/cifar/ that trains the engine under `torch.autocast`. Megatron-LM's `Float16Module`
(`self.add_module("module", module.half())`) is the stored form of the same construct."""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "wrapper_half_deepspeed"
ENGINE = "deepspeed/runtime/engine.py"
HALF = "            self.module.half()\n"
REGION = '        with torch.autocast("cuda", dtype=torch.float16):\n'


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP103", SETTINGS)


def test_the_wrapper_halving_its_module_in_place_is_reported_at_the_cast():
    found, results = findings()
    assert found == [(ENGINE, 13, "AMP103")]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "`DeepSpeedEngine.__init__` halves it, and `DeepSpeedEngine.forward` runs it under autocast" in message
    assert "examples/cifar/cifar10_deepspeed.py:32" in message


def test_the_stored_form_is_reported_too():
    stored = ("        self.module = model\n", "        self.module = model.half() if config.fp16_enabled else model\n")
    assert findings(stored, (HALF, "            pass\n"))[0] == []  # a conditional expression: not the stored value
    stored = ("        self.module = model\n", "        self.add_module(\"module\", model.half())\n")
    assert findings(stored, (HALF, "            pass\n"))[0] == [(ENGINE, 10, "AMP103")]


def test_no_autocast_in_the_example_is_pure_half_and_clean():
    assert findings((REGION, "        with torch.no_grad():\n"))[0] == []


def test_a_disabled_region_is_clean():
    assert findings((REGION, '        with torch.autocast("cuda", enabled=False):\n'))[0] == []


def test_a_method_that_does_not_run_the_halved_module_is_not_enough():
    edits = ("    def forward(self, *inputs, **kwargs):\n        return self.module(*inputs, **kwargs)\n",
             "    def forward(self, *inputs, **kwargs):\n        return self.head(*inputs, **kwargs)\n")
    assert findings(edits)[0] == []


def test_a_cast_outside_init_is_not_this_construct():
    edits = (("        if config.fp16_enabled:\n" + HALF, ""),
             ("    def step(self):\n", "    def to_half(self):\n        self.module.half()\n\n    def step(self):\n"))
    assert findings(*edits)[0] == []
