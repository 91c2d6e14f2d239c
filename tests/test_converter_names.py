"""The `.apply(fn)` converter test (converters.may_apply_converter) reads def by def only the
files that may define a name some `.apply(name)` applies. Layout shaped like openai's
guided-diffusion (guided_diffusion/unet.py applies `convert_module_to_f16` from fp16_util.py;
train_util.py and script_util.py define many unrelated functions), with a clean twin whose
converter casts to float32 (nothing applied may convert to half)."""

from __future__ import annotations

import types

from amplint.analysis.project import converters

UNET = '''\
import torch.nn as nn
from .fp16_util import convert_module_to_f16


class UNetModel(nn.Module):
    def convert_to_fp16(self):
        self.input_blocks.apply(convert_module_to_f16)
        self.middle_block.apply(convert_module_to_f16)
'''

FP16_UTIL = '''\
def convert_module_to_f16(l):
    if isinstance(l, (nn.Conv1d, nn.Conv2d)):
        l.weight.data = l.weight.data.{cast}()


def zero_grad(params):
    for param in params:
        param.grad = None
'''

TRAIN_UTIL = '''\
class TrainLoop:
    def run_loop(self):
        while True:
            self.run_step()

    def run_step(self):
        self.forward_backward()
        self.log_step()


def parse_resume_step_from_filename(filename):
    return int(filename.split("model")[-1].split(".")[0])
'''

SCRIPT_UTIL = '''\
def model_and_diffusion_defaults():
    return dict(image_size=64, use_fp16=False)


def add_dict_to_argparser(parser, default_dict):
    for k, v in default_dict.items():
        parser.add_argument(f"--{k}", default=v)
'''


def _flow(cast: str):
    files = {
        "guided_diffusion/unet.py": UNET,
        "guided_diffusion/fp16_util.py": FP16_UTIL.replace("{cast}", cast),
        "guided_diffusion/train_util.py": TRAIN_UTIL,
        "guided_diffusion/script_util.py": SCRIPT_UTIL,
    }
    return types.SimpleNamespace(p=types.SimpleNamespace(python=sorted(files), files=files))


class _Recording:
    """converters._DEF_TAIL, recording the texts it is matched in (a def read)."""

    def __init__(self, pattern) -> None:
        self.pattern, self.texts = pattern, []

    def match(self, text, *args):
        self.texts.append(text)
        return self.pattern.match(text, *args)


def _read_def_by_def(monkeypatch, flow, path):
    recording = _Recording(converters._DEF_TAIL)
    monkeypatch.setattr(converters, "_DEF_TAIL", recording)
    answer = converters.may_apply_converter(flow, flow.p.files[path])
    return answer, [name for name, text in flow.p.files.items() if text in recording.texts]


def test_only_files_that_may_define_an_applied_name_are_read(monkeypatch):
    flow = _flow("half")
    answer, read = _read_def_by_def(monkeypatch, flow, "guided_diffusion/unet.py")
    assert answer is True  # convert_module_to_f16 casts: unet.py is read for its `.apply`
    assert read == ["guided_diffusion/fp16_util.py"]  # not train_util.py nor script_util.py


def test_twin_with_a_float32_converter_stays_silent(monkeypatch):
    flow = _flow("float")
    answer, read = _read_def_by_def(monkeypatch, flow, "guided_diffusion/unet.py")
    assert answer is False  # defined in the project, no cast word in its body
    assert read == ["guided_diffusion/fp16_util.py"]
