"""AMP132 apex-amp."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.tree import dotted_name
from amplint.analysis.rules import Flag, Rule

# The entry points of apex AMP and what replaces each in torch.amp.
ENTRY_POINTS = {
    "apex.amp.initialize": (
        "keep the model and optimizer as they are (fp32) and run the forward under "
        "`torch.autocast(\"cuda\", dtype=torch.float16)`"
    ),
    "apex.amp.scale_loss": (
        "create `scaler = torch.amp.GradScaler(\"cuda\")` and write "
        "`scaler.scale(loss).backward()`, then `scaler.step(optimizer)` and `scaler.update()`"
    ),
    "apex.amp.init": (
        "the old handle API: run the forward under `torch.autocast(\"cuda\")` and scale with "
        "`torch.amp.GradScaler(\"cuda\")`"
    ),
}
REMOVED = "ImportError: cannot import name 'amp' from 'apex'"


class ApexAmp(Rule):
    """## What it does
    Finds uses of NVIDIA apex's AMP: `amp.initialize(model, optimizer, opt_level=...)`,
    `with amp.scale_loss(loss, optimizer) as scaled_loss:` and the older `amp.init()`, however
    `apex.amp` was imported (`from apex import amp`, `import apex`, `from apex.amp import
    scale_loss`). A file that imports `apex.amp` and only uses its helpers
    (`amp.master_params`, `amp.state_dict`) is reported once, at the import.

    ## Why is this bad?
    apex AMP is superseded by PyTorch's native `torch.amp` (autocast + GradScaler). apex
    announced it on import:
    `DeprecatedFeatureWarning: apex.amp is deprecated and will be removed by the end of February
    2023. Use [PyTorch AMP](https://pytorch.org/docs/stable/amp.html)`, and current apex
    builds no longer ship it, so the import fails with
    `ImportError: cannot import name 'amp' from 'apex'`. Its O2/O3 levels cast the model itself
    to fp16 (O2 keeping fp32 master weights inside a patched optimizer); native AMP leaves the
    model in fp32 and casts per operation inside `torch.autocast`.
    A `try: from apex import amp / except ImportError:` guard keeps the import from failing but
    not the feature from being gone.

    ## Example
    ```python
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        loss = loss_fn(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Fix safety
    No automatic fix, only the suggestion: the migration moves the forward into an autocast
    region, adds `scaler.step` / `scaler.update` around the optimizer step, and changes what
    checkpoints store (`amp.state_dict()` becomes `scaler.state_dict()`), which a local edit
    cannot do safely.
    """

    code = "AMP132"
    name = "apex-amp"
    severity = Severity.INFO
    fix_safety = "suggestion"
    triggers = ("apex",)

    flag = [
        Flag(
            "from apex import amp\n"
            "def setup(model, optimizer):\n"
            "    model, optimizer = amp.initialize(model, optimizer, opt_level='O1')\n"
            "    return model, optimizer\n"
            "def train_step(model, optimizer, loss_fn, x, y):\n"
            "    loss = loss_fn(model(x), y)\n"
            "    with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
            "        scaled_loss.backward()\n"
            "    optimizer.step()\n",
            count=2,
        ),
        Flag(  # timm's ApexScaler: a guarded import is still apex AMP
            "try:\n"
            "    from apex import amp\n"
            "    has_apex = True\n"
            "except ImportError:\n"
            "    amp = None\n"
            "    has_apex = False\n"
            "class ApexScaler:\n"
            "    def __call__(self, loss, optimizer):\n"
            "        with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
            "            scaled_loss.backward()\n"
            "        optimizer.step()\n",
        ),
        Flag(  # `import apex` and the dotted spelling
            "import apex\n"
            "model, opt = apex.amp.initialize(model, opt, opt_level='O2')\n",
        ),
        Flag(  # only helpers used: reported once, at the import
            "from apex import amp\n"
            "import torch\n"
            "def clip(optimizer, max_norm):\n"
            "    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)\n",
        ),
        Flag(  # imported by name
            "from apex.amp import scale_loss\n"
            "def backward(loss, opt):\n"
            "    with scale_loss(loss, opt) as s:\n"
            "        s.backward()\n",
        ),
    ]
    clean = [
        # the native recipe
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "for x, y in loader:\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        loss = loss_fn(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # apex's other packages are not apex AMP
        "from apex.optimizers import FusedAdam\n"
        "from apex.normalization import FusedLayerNorm\n"
        "from apex.parallel import DistributedDataParallel as ApexDDP\n"
        "optimizer = FusedAdam(model.parameters(), lr=1e-3)\n",
        # a local `amp` module / object of the project is not apex's
        "from . import amp\n"
        "from mypkg.utils import amp as amp_utils\n"
        "model, optimizer = amp.initialize(model, optimizer)\n"
        "amp_utils.scale_loss(loss)\n",
        # an optimizer class name in a registry string is not a use
        "apex_optimizers = ['apex.optimizers.FusedAdam', 'apex.amp']\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        reported = False
        for qualified, site in facts.calls_to(*ENTRY_POINTS):
            reported = True
            short = qualified.replace("apex.amp.", "amp.")
            message = (
                f"`{short}` is apex AMP: deprecated, and gone from current apex "
                f"(\"{REMOVED}\"); use torch.amp: {ENTRY_POINTS[qualified]}"
            )
            yield self.report(site.node, message)
        if reported:
            return
        helper = next(
            (site for q, site in facts.qualified_calls if (q or "").startswith("apex.amp.")), None
        )
        if helper is not None:
            node = self._apex_amp_import(ctx.module) or helper.node
            message = (
                "apex AMP is deprecated, and gone from current apex "
                f"(\"{REMOVED}\"); use `torch.autocast` and `torch.amp.GradScaler` "
                "(`scaler.unscale_(optimizer)` before clipping replaces `amp.master_params`)"
            )
            yield self.report(node, message)

    @staticmethod
    def _apex_amp_import(module: cst.Module) -> Optional[cst.CSTNode]:
        """The first import statement that binds apex.amp (or something from it)."""
        found: list = []

        class Finder(cst.CSTVisitor):
            def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
                if node.relative or node.module is None or found:
                    return
                base = dotted_name(node.module)
                if base == ("apex",) and not isinstance(node.names, cst.ImportStar):
                    if any(
                        isinstance(a.name, cst.Name) and a.name.value == "amp" for a in node.names
                    ):
                        found.append(node)
                elif base and base[:2] == ("apex", "amp"):
                    found.append(node)

            def visit_Import(self, node: cst.Import) -> None:
                if found:
                    return
                for alias in node.names:
                    name = dotted_name(alias.name)
                    if name and name[:2] == ("apex", "amp"):
                        found.append(node)

        module.visit(Finder())
        return found[0] if found else None

