"""The `.apply(fn)` converter test (converters.converting_files) reads, once the class flow's
call-word index is built, only the files that index says call `apply` or one of the applied
names (`.apply(` and `def name(` are calls of the word): the answers are those of the test of
every file. Layout shaped like openai's guided-diffusion (guided_diffusion/unet.py applies
`convert_module_to_f16` from fp16_util.py and `self._init_weights`; the datasets and scripts
apply and define nothing of theirs), with a clean twin whose converter casts to float32."""

from __future__ import annotations

import types

from amplint.analysis.project import converters
from amplint.analysis.project.call_words import _SCANS_BEFORE_INDEX, CallWords
from amplint.analysis.project.flowindex import FlowIndex

UNET = '''\
import torch.nn as nn
from .fp16_util import convert_module_to_f16


class UNetModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.apply(self._init_weights)

    def _init_weights(self, module):
        nn.init.zeros_(module.weight)

    def convert_to_fp16(self):
        self.input_blocks.apply(convert_module_to_f16)
'''

FP16_UTIL = '''\
def convert_module_to_f16(l):
    l.weight.data = l.weight.data.{cast}()


async  def   zero_grad (params):
    for param in params:
        param.grad = None
'''

DATASET = '''\
from torch.utils.data import Dataset


class ImageDataset{n}(Dataset):
    def __getitem__(self, index):
        return load_image(self.paths[index])
'''


def _files(cast: str) -> dict:
    files = {"guided_diffusion/unet.py": UNET, "guided_diffusion/fp16_util.py": FP16_UTIL.format(cast=cast)}
    for n in range(12):
        files[f"guided_diffusion/datasets/set{n}.py"] = DATASET.format(n=n)
    files["scripts/image_train.py"] = "def main():\n    model.apply(init)\n"  # `init`: defined nowhere
    return files


class _Flow:
    """What converters reads of the class flow: its files and its call-word index."""

    indexed_calls = FlowIndex.indexed_calls

    def __init__(self, files: dict, indexed: bool) -> None:
        self.p = types.SimpleNamespace(python=list(files), files=files)
        self._words = CallWords(self.p.python, files)
        if indexed:  # as the class flow's call-site questions build it
            for n in range(_SCANS_BEFORE_INDEX + 1):
                self._words.files_calling(f"word{n}")


def test_with_the_call_index_only_files_calling_apply_or_an_applied_name_are_read():
    flow = _Flow(_files("half"), indexed=True)
    assert converters.converting_files(flow) == {"guided_diffusion/unet.py", "scripts/image_train.py"}
    # `.apply(` in unet.py and image_train.py; `def convert_module_to_f16(` in fp16_util.py,
    # `def _init_weights(` in unet.py: not one of the 12 datasets
    assert flow.converter_texts == 2 + 2


def test_answers_equal_those_of_every_file_read():
    for cast in ("half", "float", "bfloat16"):
        indexed, scanned = _Flow(_files(cast), indexed=True), _Flow(_files(cast), indexed=False)
        assert converters.converting_files(indexed) == converters.converting_files(scanned)
        assert converters._function_names(indexed) == converters._function_names(scanned)
        assert converters.converting_files(scanned) == {
            path for path, text in scanned.p.files.items() if converters.may_apply_converter(scanned, text)}
        assert scanned.converter_texts == 2 * len(scanned.p.files)  # no index: every file, as before


def test_twin_with_a_float32_converter_stays_silent():
    flow = _Flow(_files("float"), indexed=True)
    # unet.py's converters are defined without a cast word; image_train's `init` is followed
    assert converters.converting_files(flow) == {"scripts/image_train.py"}
