"""AMP153 dataparallel-autocast."""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Diagnostic, Severity
from amplint.analysis.facts.callgraph import CallGraph
from amplint.analysis.facts.module_autocast import EntryModule, EntryWrappedCall, forward_autocasts
from amplint.analysis.facts.tree import scope_key
from amplint.analysis.facts.names import bound_locally, visible_scopes
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, receiver_root
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, keyword, region_note

DATA_PARALLEL = ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                 "torch.nn.parallel.data_parallel.DataParallel")


class DataparallelAutocast(Rule):
    """## What it does
    Finds an `nn.DataParallel` model called under a **bfloat16** autocast region (also a dtype
    chosen between bfloat16 and another, `dtype=torch.bfloat16 if ... else ...`, written there
    or in a local name bound once to the choice), when the wrapped module's class is in the same file and its `forward` does not open autocast itself
    (no autocast decorator, no autocast `with` in it or in what it calls).
    The class may also be defined in another file of the project and imported here
    (`from models.yolo import Model`; `model = Model(...)`, then `nn.DataParallel(model)`, under
    an `if` or not): the project pass reads its `forward` in its own file, and the message says
    where it is defined. Nor need the wrapper be in this file: the project's class flow follows
    the called value (a parameter bound at a call site, a trainer attribute, a factory's return)
    and keeps an `nn.DataParallel(...)` met on the way, on any branch (pytorch/examples'
    imagenet: a helper returns `torch.nn.DataParallel(model).cuda()` when there are several
    GPUs); the message then cites the wrapper and the chain.

    ## Why is this bad?
    Autocast state is thread-local, and DataParallel runs each replica's forward in its own
    thread. Since pytorch/pytorch#43102 (2020) `parallel_apply` re-enters autocast in those
    threads, but it passes on only `enabled`: the replicas run
    `torch.amp.autocast(device_type, enabled=True)`, whose dtype is the thread's default,
    **float16**. So with more than one GPU a bfloat16 region silently becomes float16 inside the
    model, where activations beyond 65504 overflow to inf and small gradients underflow with no
    GradScaler to catch them (the same mechanism as pytorch/pytorch#125186 for autograd
    threads). Releases before that change ran the replicas with no autocast at all. The AMP docs' fix is
    to apply autocast as part of the model's `forward`. With float16 autocast on current torch,
    or a single device, DataParallel behaves and nothing is reported; nor when the wrapped
    class is not visible in the file or the project (a library's model).

    ## Example
    ```python
    class Net(nn.Module):
        def forward(self, x):
            return self.head(self.body(x))

    dp_model = nn.DataParallel(Net().cuda())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = dp_model(x)
    ```

    ## Use instead
    ```python
    class Net(nn.Module):
        @torch.autocast("cuda", dtype=torch.bfloat16)
        def forward(self, x):
            return self.head(self.body(x))

    dp_model = nn.DataParallel(Net().cuda())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = dp_model(x)
    ```
    (or `DistributedDataParallel` with one GPU per process, which runs no side threads).

    ## Fix safety
    A **suggestion**, no edit: which dtype `forward` should use, and whether it should follow a
    configuration flag, is the model author's choice.
    """

    code = "AMP153"
    name = "dataparallel-autocast"
    severity = Severity.INFO
    fix_safety = "suggestion"
    triggers = ("DataParallel",)

    flag = [
        Flag(
            "import torch\n"
            "from torch import nn\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(8, 8)\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"
            "model = Net().cuda()\n"
            "if torch.cuda.device_count() > 1:\n"
            "    model = nn.DataParallel(model)\n"
            "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "    out = model(x)\n",
        ),
        Flag(  # a trainer holding the wrapped model; dtype picked by a flag
            "import torch\n"
            "import torch.nn as nn\n"
            "class Backbone(nn.Module):\n"
            "    def forward(self, x):\n"
            "        return self.blocks(x)\n"
            "class Trainer:\n"
            "    def __init__(self, args):\n"
            "        self.model = nn.DataParallel(Backbone().cuda())\n"
            "        self.dtype = torch.bfloat16 if args.bf16 else torch.float16\n"
            "    def step(self, x):\n"
            "        with torch.autocast('cuda', dtype=torch.bfloat16 if self.args.bf16 else torch.float16):\n"
            "            return self.model(x).mean()\n",
        ),
    ]
    clean = [
        # one device: DataParallel calls the module itself, in the caller's thread
        "import torch\nimport torch.nn as nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n"
        "model = nn.DataParallel(Net(), device_ids=[0]).cuda()\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    out = model(x)\n",
        # the docs' DataParallel example: float16 autocast reaches the replica threads
        "import torch\n"
        "from torch import nn\n"
        "class MyModel(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "model = MyModel()\n"
        "dp_model = nn.DataParallel(model)\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    output = dp_model(input)\n",
        # autocast applied as part of forward, as the docs suggest
        "import torch\n"
        "from torch import nn\n"
        "class MyModel(nn.Module):\n"
        "    @torch.autocast(device_type='cuda', dtype=torch.bfloat16)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "class Other(nn.Module):\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "            return self.fc(x)\n"
        "dp = nn.DataParallel(MyModel())\n"
        "dp2 = nn.DataParallel(Other())\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    out = dp(x) + dp2(x)\n",
        # the wrapped class is not in this file: say nothing
        "import torch\n"
        "from torch import nn\n"
        "from models import build_model\n"
        "model = nn.DataParallel(build_model(cfg))\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    out = model(x)\n",
        # DistributedDataParallel, one GPU per process
        "import torch\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "model = nn.parallel.DistributedDataParallel(Net().cuda(), device_ids=[rank])\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    out = model(x)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        remote = {e.target: f"`{e.cls}`, defined at {e.where}" if e.cls != e.target else
                  f"defined at {e.where}" for e in facts.entries if isinstance(e, EntryModule)}
        wrapped = self._wrapped(facts, remote)
        flowed = {(e.scope, e.receiver): e for e in facts.entries if isinstance(e, EntryWrappedCall)}
        if flowed:
            yield from self._flowed(facts, flowed, wrapped)
        if not wrapped:
            return
        covered: Dict[str, bool] = {}
        index = {id(site.node): i for i, site in enumerate(facts.tree.calls)}
        for site in facts.tree.calls:
            found = self._dp_call(site, wrapped, index)
            if found is None:
                continue
            cls, construction = found
            region = facts.active_region(site.frame)
            if region is None or not region.may_be_cuda or not _maybe_bfloat16(region):
                continue
            where = remote.get(cls)
            if cls not in covered:  # another file's class comes with its answer: it does not
                covered[cls] = where is None and forward_autocasts(facts, cls)
            if covered[cls]:
                continue
            note, related = region_note(region)
            related = dict(related, dp_line=construction.node)
            name = ".".join(dotted_name(site.node.func) or ("model",))
            message = (
                f"`{name}` is an `nn.DataParallel` of `{cls}` (line {{dp_line}}"
                f"{f'; the class is {where}' if where else ''}) called under "
                f"bfloat16 autocast {note}: the replica threads re-enter autocast with only "
                "`enabled` passed on, so with several GPUs they compute in float16 (on old "
                f"releases not autocast at all); apply autocast in `{cls}.forward` "
                "(`@torch.autocast(\"cuda\", dtype=torch.bfloat16)`) or use DDP"
            )
            yield self.report(site.node, message, related=related)

    def _flowed(self, facts, flowed, wrapped) -> Iterable[Diagnostic]:
        """Calls whose receiver the project's class flow found wrapped in `nn.DataParallel`
        elsewhere (a builder in another file, a parameter bound at a call site)."""
        for site in facts.tree.calls:
            if _binding(site.node.func, site.frame) in wrapped:
                continue  # this file's own DataParallel: reported below
            name = dotted_name(site.node.func)
            entry = flowed.get((scope_key(site.frame), name)) if name else None
            if entry is None:
                continue
            region = facts.active_region(site.frame)
            if region is None or not region.may_be_cuda or not _maybe_bfloat16(region):
                continue
            note, related = region_note(region)
            message = (
                f"`{'.'.join(name)}` may be an `nn.DataParallel` of `{entry.cls}` ({entry.wrap}; "
                f"{entry.via}; the class is defined at {entry.where}) called under bfloat16 autocast "
                f"{note}: the replica threads re-enter autocast with only `enabled` passed on, so "
                "with several GPUs they compute in float16 (on old releases not autocast at all); "
                f"apply autocast in `{entry.cls}.forward` (`@torch.autocast(\"cuda\", "
                "dtype=torch.bfloat16)`) or use DDP"
            )
            yield self.report(site.node, message, related=related)

    # -- facts ----------------------------------------------------------------------------
    @staticmethod
    def _wrapped(facts, remote) -> Dict[Tuple, Tuple[str, CallSite]]:
        """Binding of a DataParallel -> (wrapped class, the DataParallel call).
        Keys: ("name", scope id, name) or ("self", class name, attr)."""
        found: Dict[Tuple, Tuple[str, CallSite]] = {}
        constructions = {id(site.node): site for _q, site in facts.calls_to(*DATA_PARALLEL)}
        if not constructions:
            return found
        graph = facts.callgraph
        for assign in facts.tree.assigns:
            site = constructions.get(id(assign.value))
            if site is None or len(assign.targets) != 1:
                continue
            arg = argument(site.node, 0, "module")
            if arg is None or single_device(site.node):
                continue
            cls = (graph.class_of_value(arg.value) or _class_of_name(facts, arg.value, site)
                   or _remote_class(facts, arg.value, site, remote))
            if cls is None:
                continue
            key = _binding(assign.targets[0], assign.frame)
            if key is not None:
                found[key] = (cls, site)
        return found

    @staticmethod
    def _dp_call(site: CallSite, wrapped, index) -> Optional[Tuple[str, CallSite]]:
        key = _binding(site.node.func, site.frame)
        if key is None or key not in wrapped:
            return None
        cls, construction = wrapped[key]
        if key[0] == "name" and construction.frame.scope is site.frame.scope:
            # `model(x)` before `model = nn.DataParallel(model)` is the bare model
            if index[id(site.node)] < index[id(construction.node)]:
                return None
        return cls, construction


def single_device(call: cst.Call) -> bool:
    """`nn.DataParallel(m, device_ids=[0])`: one device, so DataParallel calls the module
    itself in the caller's thread (no replicas, autocast state kept)."""
    ids = argument(call, 1, "device_ids")
    return ids is not None and isinstance(ids.value, (cst.List, cst.Tuple)) \
        and len(ids.value.elements) == 1 and not isinstance(ids.value.elements[0], cst.StarredElement)


def _binding(expr: cst.BaseExpression, frame: Frame) -> Optional[Tuple]:
    if isinstance(expr, cst.Name):
        scope = next((s for s in visible_scopes(frame) if expr.value in s.bindings), None)
        return ("name", id(scope), expr.value) if scope is not None else None
    owner = CallGraph.self_attr_owner(expr, frame)
    return ("self",) + owner if owner is not None else None


def _class_of_name(facts, expr: cst.BaseExpression, site: CallSite) -> Optional[str]:
    """`model = Net(...)` earlier in the same scope, then `nn.DataParallel(model)`; or
    `self.model = Net(...)` in the class."""
    graph = facts.callgraph
    if isinstance(expr, cst.Name):
        for assign in facts.tree.assigns:
            if assign.frame.scope is not site.frame.scope or len(assign.targets) != 1:
                continue
            target = assign.targets[0]
            if isinstance(target, cst.Name) and target.value == expr.value:
                cls = graph.class_of_value(assign.value)
                if cls is not None:
                    return cls
        return None
    return graph.class_of_instance(expr, site.frame)


def _remote_class(facts, expr: cst.BaseExpression, site: CallSite, remote) -> Optional[str]:
    """`Net(...)` of a class another file defines (the project pass's EntryModule names it as
    imported here), directly or through `model = Net(...)` earlier in the same scope."""
    if not remote:
        return None
    values = [expr]
    if isinstance(expr, cst.Name):
        values = [a.value for a in facts.tree.assigns if a.frame.scope is site.frame.scope
                  and len(a.targets) == 1 and isinstance(a.targets[0], cst.Name)
                  and a.targets[0].value == expr.value]
    for value in values:
        root = receiver_root(value)
        if (isinstance(root, cst.Call) and isinstance(root.func, cst.Name)
                and root.func.value in remote and not bound_locally(root.func.value, site.frame)):
            return root.func.value
    return None



def _maybe_bfloat16(region: Region) -> bool:
    if region.dtype == "bfloat16":
        return True
    if region.dtype is not None:
        return False
    if "bfloat16" in region.dtype_choices or "bfloat16" in region.root.dtype_choices:
        return True
    origin = region.root.origin
    if isinstance(origin, cst.Decorator):
        origin = origin.decorator
    if not isinstance(origin, cst.Call):
        return False
    arg = keyword(origin, "dtype")
    if arg is None:
        return False
    return "bfloat16" in cst.Module([]).code_for_node(arg.value)
