"""A warm run takes the first pass's Need of each file it lints nothing of from the cache
(amplint.run.result_cache.cached_need): it does not read and test every text again. Its findings
stay those of a cold run, and an edited file's Need is made again from its new text.

The project is shaped like karpathy/nanoGPT: train.py opens the region and calls the model;
model.py holds a module; configurator.py and a data script hold neither (the files whose Need
a warm run used to recompute)."""

from __future__ import annotations

import collections

import amplint.run.first_pass as first_pass
from project_files import cli_findings

FILES = {
    "train.py": (
        "import torch\n"
        "from model import GPT\n"
        "\n"
        "def step(x, idx, n):\n"
        "    model = GPT()\n"
        "    with torch.autocast('cuda'):\n"
        "        h = model(x)\n"
        "        out = torch.zeros(n, 8, device=h.device)\n"
        "        out[idx] = h\n"
        "    return out\n"
    ),
    "model.py": (
        "import torch\n"
        "\n"
        "class GPT(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.head = torch.nn.Linear(8, 8)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return self.head(x)\n"
    ),
    "configurator.py": "batch_size = 12\nblock_size = 1024\n",
    "data/prepare.py": "import os\n\ndef shards(root):\n    return sorted(os.listdir(root))\n",
}


def _project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _counted(monkeypatch):
    tested = collections.Counter()
    real = first_pass.needs_summary

    def counted(text):
        tested[text] += 1
        return real(text)

    monkeypatch.setattr(first_pass, "needs_summary", counted)
    return tested


def test_a_warm_run_reads_each_needs_from_the_cache(tmp_path, monkeypatch):
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    tested = _counted(monkeypatch)
    cold = cli_findings(root, "--cache-dir", cache, "--jobs", "1")
    assert cold == [("train.py", 8, "AMP101")]
    assert tested[FILES["configurator.py"]] == 1 and tested[FILES["data/prepare.py"]] == 1
    tested.clear()
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == cold
    assert sum(tested.values()) == 0  # base: every file the first pass lints nothing of, again


def test_an_edited_file_gets_its_need_again(tmp_path, monkeypatch):
    """configurator.py starts to open a region: the warm run tests its new text, and the
    region's file is found (the Need kept for the old text must not answer)."""
    root = _project(tmp_path)
    cache = str(tmp_path / ".cache")
    tested = _counted(monkeypatch)
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == [("train.py", 8, "AMP101")]
    edited = (
        "import torch\n"
        "from model import GPT\n"
        "\n"
        "def sample(x, idx, n):\n"
        "    model = GPT()\n"
        "    with torch.autocast('cuda'):\n"
        "        h = model(x)\n"
        "        buf = torch.zeros(n, 8, device=h.device)\n"
        "        buf[idx] = h\n"
        "    return buf\n"
    )
    (root / "configurator.py").write_text(edited)
    tested.clear()
    assert cli_findings(root, "--cache-dir", cache, "--jobs", "1") == [
        ("configurator.py", 8, "AMP101"), ("train.py", 8, "AMP101")]
    assert tested[edited] >= 1
    assert tested[FILES["data/prepare.py"]] == 0
