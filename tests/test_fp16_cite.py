"""Findings in fp16 code say why the code is fp16 (issue 28): the class made half and the line,
or the chain another file made, never a generic "a module the file turns half"."""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project import lint_project

SETTINGS = Settings.default()

# laid out like a deployment script that halves a model defined in a package
NET = (
    "import torch\n"
    "from torch import nn\n\n\n"
    "class Block(nn.Module):\n"
    "    def forward(self, x, mask):\n"
    "        pad = torch.zeros(x.shape[0], 4, device=x.device)\n"
    "        return torch.cat([x, pad], 1).masked_fill(mask, -1e9)\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.block = Block()\n\n"
    "    def forward(self, x, mask):\n"
    "        return self.block(x, mask)\n"
)
DEPLOY = (
    "from models.net import Net\n\n\n"
    "def load():\n"
    "    return Net().cuda().half()\n\n\n"
    "model = load()\n"
)


def messages(results):
    return sorted((d.code, d.message) for r in results.values() for d in r.diagnostics)


def test_cross_file_half_cites_the_chain():
    files = {"proj/models/net.py": NET, "proj/tools/deploy.py": DEPLOY}
    found = messages(lint_project(files, SETTINGS))
    assert [code for code, _ in found] == ["AMP101", "AMP110"]
    for _, message in found:
        assert "Net() at tools/deploy.py:5 made float16" in message, message
        assert "the file turns half" not in message
    twin = {"proj/models/net.py": NET, "proj/tools/deploy.py": DEPLOY.replace(".half()", "")}
    assert messages(lint_project(twin, SETTINGS)) == []


def test_local_half_cites_the_line():
    source = NET + "\n\nnet = Net().half()\n"
    found = messages({"a": lint_source("net.py", source, SETTINGS)})
    assert [code for code, _ in found] == ["AMP101", "AMP110"]
    for _, message in found:
        assert "(`Block` is a submodule of `Net`; `Net` is made half at line 20)" in message, message

