"""A class of torch.utils.data (a Dataset) is never the module a cast turned half
(amplint/analysis/project/halfspread.py `_NOT_MODULE_BASES`): it has no `.to`/`.half`.

tests/projects/half_opensora_registry: hpcaitech/Open-Sora layout (opensora/registry.py with
`build_module(module, builder)` over mmengine registries MODELS and DATASETS,
opensora/models/vae.py, opensora/datasets/datasets.py, gradio/app.py casting the VAE to
bfloat16, scripts/train.py building the dataset). `build_module`'s return is one value for all
its calls, so the VAE cast in gradio/app.py also reaches the dataset class: main reported the
dataset's `torch.randn` (datasets.py:15) as fp16 code. The VAE's own `torch.randn` stays reported
(vae.py:15). Twins: the dataset subclassing `Dataset` imported by name is silent alike; a dataset
that is an nn.Module is still fp16 code.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "half_opensora_registry"
VAE = ("opensora/models/vae.py", 15, "AMP101")
DATASET = ("opensora/datasets/datasets.py", 15, "AMP101")


def amp101(files):
    return code_findings(files, "AMP101")[0]


def test_dataset_merged_into_a_bf16_registry_build_is_no_fp16_code():
    assert amp101(load(NAME)) == [VAE]


def test_twin_dataset_base_imported_by_name_is_silent():
    files = load(NAME, (("import torch\n\nfrom opensora.registry import DATASETS\n",
                         "import torch\nfrom torch.utils.data import Dataset\nfrom opensora.registry import DATASETS\n"),
                        ("class TextDataset(torch.utils.data.Dataset):", "class TextDataset(Dataset):")))
    assert amp101(files) == [VAE]


def test_twin_a_module_base_is_still_fp16_code():
    files = load(NAME, (("class TextDataset(torch.utils.data.Dataset):", "class TextDataset(torch.nn.Module):"),))
    assert amp101(files) == [DATASET, VAE]
