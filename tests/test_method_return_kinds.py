"""What a METHOD returns, read by the facts that classify a value's kind through the same summary
as a function's (facts/function_returns.py, issue 26): a `@property` read as `self.<name>`, a
staticmethod or classmethod called on its class (`DistUtils.local_device()`), a method of a
fresh instance (`ModelLoader().load(ckpt)`), each with the receiver's class known exactly (no
subclass of the file overriding it).

method_returns_ddpm is shaped like lucidrains/denoising-diffusion-pytorch (its Unet, a Trainer
with a `device` property and a `train_step`, a sampling function), in a fork that adds a
`DistUtils` helper class and an fp16 training script with a `ModelLoader`:
- `torch.autocast(device_type=self.device, ...)` where the property returns a `torch.device`,
  and `torch.autocast(DistUtils.local_device(), ...)` in its own file and in sampler.py, which
  imports the class (the project pass's summary of the staticmethod): AMP131 (torch 2.13 raises 'ValueError:
  Expected `device_type` of type `str`').
- `model = ModelLoader().load(ckpt)` returns the Unet `.half()`, trained by a plain Adam with
  eps=1e-8 (0 in float16) and no autocast or GradScaler: AMP152.
Twins: the property returning a device type string, a subclass overriding the property, the
staticmethod's call passing `.type`, a decorated helper, the loader returning the float32 model.
"""

from __future__ import annotations

import pytest

from amplint.analysis.engine import Settings

from project_files import code_findings, load

NAME = "method_returns_ddpm"
TRAINER = "denoising_diffusion_pytorch/trainer.py"
SAMPLER = "denoising_diffusion_pytorch/sampler.py"
DEVICE_FOUND = [(SAMPLER, 14, "AMP131"), (TRAINER, 23, "AMP131"), (TRAINER, 36, "AMP131")]
PROPERTY = '        return torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'


def findings(code, replace=()):
    return code_findings(load(NAME, replace), code, Settings.default())[0]


def test_a_property_and_a_staticmethod_returning_a_device_object():
    assert findings("AMP131") == DEVICE_FOUND


def test_a_property_returning_a_device_type_is_silent():
    assert findings("AMP131", ((PROPERTY, '        return "cuda" if torch.cuda.is_available() else "cpu"\n'),)) \
        == [DEVICE_FOUND[0], DEVICE_FOUND[2]]


def test_a_subclass_overriding_the_property_is_not_read():
    sub = ("\n\nclass CPUTrainer(Trainer):\n    @property\n    def device(self):\n        return \"cpu\"\n"
           "\n\n@torch.no_grad()\ndef sample(")
    found = findings("AMP131", (("\n\n@torch.no_grad()\ndef sample(", sub),))
    assert found == [DEVICE_FOUND[0], (TRAINER, 42, "AMP131")]


def test_a_subclass_binding_the_name_as_a_class_attribute_is_not_read():
    """`class CPUTrainer(Trainer): device = "cpu"`: the class attribute wins over the base's
    property for a CPUTrainer, so `self.device` in Trainer may be a string. Twin: a class
    attribute of another name leaves the property read."""
    sub = "\n\nclass CPUTrainer(Trainer):\n    %s = \"cpu\"\n\n\n@torch.no_grad()\ndef sample("
    found = findings("AMP131", (("\n\n@torch.no_grad()\ndef sample(", sub % "device"),))
    assert found == [DEVICE_FOUND[0], (TRAINER, 40, "AMP131")]
    found = findings("AMP131", (("\n\n@torch.no_grad()\ndef sample(", sub % "backend"),))
    assert found == [DEVICE_FOUND[0], (TRAINER, 23, "AMP131"), (TRAINER, 40, "AMP131")]


def test_a_classmethod_is_read_as_the_staticmethod():
    assert findings("AMP131", (("    @staticmethod\n    def local_device():",
                                "    @classmethod\n    def local_device(cls):"),)) == DEVICE_FOUND


def test_a_helper_with_another_decorator_is_not_read():
    assert findings("AMP131", (("    @staticmethod\n    def local_device():",
                                "    @staticmethod\n    @functools.lru_cache\n    def local_device():"),
                               ("import os\n", "import functools\nimport os\n"))) == [(TRAINER, 25, "AMP131")]


def test_another_files_staticmethod_returning_a_string_is_silent():
    assert findings("AMP131", (('        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))\n',
                                '        return "cuda"\n'),)) == [(TRAINER, 23, "AMP131")]


def test_a_fresh_instances_method_returning_the_half_model():
    assert findings("AMP152") == [("train_fp16.py", 15, "AMP152")]


def test_the_loader_returning_the_float32_model_is_silent():
    assert findings("AMP152", (("        return model.half()\n", "        return model\n"),)) == []


def test_the_premises_under_torch():
    """torch 2.13, CPU: a `torch.device` as the device type raises, enabled or not."""
    torch = pytest.importorskip("torch")
    for enabled in (True, False):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            with torch.autocast(device_type=torch.device("cpu"), dtype=torch.bfloat16, enabled=enabled):
                pass
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
