"""A dataclass field's construction sites are searched like a container's (issue 34): counted
(files summarised), not timed.

A project laid out like huggingface/transformers: `models/llama/settings_llama.py` keeps a
`@dataclass class ModelSettings` whose `head` field holds a module, and `LlamaModel.__init__`
stores `self.head = settings.head` from `ModelSettings(head=LlamaHead(...))`. A conversion script
turns the model half, so the half spread asks what the field may hold: the construction sites of
`ModelSettings`. Other models define a dataclass of the same name in their own modeling file
(`ModelSettings(hidden_size=...)`): their calls construct their own class, never Llama's, so
their files are not summarised for the question (before, every file calling `ModelSettings(`
was). The half set (LlamaModel and, through the field, LlamaHead) is the same."""

from __future__ import annotations

from amplint.analysis.project import build

ROOT = "transformers/src/transformers"

SETTINGS_LLAMA = """from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelSettings:
    head: nn.Module = None
    hidden_size: int = 64
"""
LLAMA = """import torch.nn as nn

from .settings_llama import ModelSettings


class LlamaHead(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        return self.proj(x)


class LlamaModel(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        settings = ModelSettings(head=LlamaHead(hidden_size), hidden_size=hidden_size)
        self.head = settings.head

    def forward(self, x):
        return self.head(x)
"""
OTHER = """from dataclasses import dataclass

import torch.nn as nn


@dataclass
class ModelSettings:
    hidden_size: int = 64


class {name}Model(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.settings = ModelSettings(hidden_size=hidden_size)
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, x):
        return self.proj(x)
"""
CONVERT = """import torch

from transformers.models.llama.modeling_llama import LlamaModel


def main():
    model = LlamaModel(64).half()
    return model(torch.zeros(2, 64, dtype=torch.float16))
"""
OTHERS = ["Mistral", "Gemma", "Qwen2", "Phi3"]


def _files(others: int, imported: bool = False):
    files = {
        f"{ROOT}/__init__.py": "",
        f"{ROOT}/models/__init__.py": "",
        f"{ROOT}/models/llama/__init__.py": "",
        f"{ROOT}/models/llama/settings_llama.py": SETTINGS_LLAMA,
        f"{ROOT}/models/llama/modeling_llama.py": LLAMA,
        "transformers/scripts/convert_llama_to_half.py": CONVERT,
    }
    for name in OTHERS[:others]:
        text = OTHER.format(name=name)
        if imported:  # builds Llama's settings: a site of the question
            text = text.replace("@dataclass\nclass ModelSettings:\n    hidden_size: int = 64\n",
                                "from ..llama.settings_llama import ModelSettings\n")
        files[f"{ROOT}/models/{name.lower()}/__init__.py"] = ""
        files[f"{ROOT}/models/{name.lower()}/modeling_{name.lower()}.py"] = text
    return files


def _others_summarised(project):
    return sorted(p for p in project.parsed if "/modeling_" in p and "llama" not in p)


def test_sites_of_a_same_named_dataclass_are_not_summarised():
    for others in (1, 4):
        project = build(_files(others))
        half = {cls for (_, cls) in project.flow.half_instances()}
        assert half == {"LlamaModel", "LlamaHead"}
        assert _others_summarised(project) == []


def test_a_file_building_the_dataclass_itself_is_summarised():
    project = build(_files(2, imported=True))
    half = {cls for (_, cls) in project.flow.half_instances()}
    assert half == {"LlamaModel", "LlamaHead"}
    assert len(_others_summarised(project)) == 2
