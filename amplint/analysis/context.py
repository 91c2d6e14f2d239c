"""What a rule sees of one file: its path, text, tree and the facts computed once for it."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from amplint.analysis.data.torch_versions import TorchTarget
from amplint.analysis.facts import FileFacts


@dataclass
class FileContext:
    path: str
    source: str
    module: cst.Module
    facts: FileFacts
    torch: TorchTarget = TorchTarget()  # the project's target torch: fixes check what it has
