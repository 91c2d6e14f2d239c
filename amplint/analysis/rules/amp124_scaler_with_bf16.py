"""AMP124 scaler-with-bf16."""

from __future__ import annotations

from typing import Iterable, List, Optional

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.autocast_calls import Region
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.syntax import bound_arguments, iter_nodes, literal_bool
from amplint.analysis.facts.scaler_regions import callee_regions
from amplint.analysis.facts.scaler_remote import remote_entry
from amplint.analysis.facts.scalers import SCALER_APIS
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import kwarg, with_args


class ScalerWithBf16(Rule):
    """## What it does
    Finds a GradScaler created enabled (no `enabled=`, or `enabled=True`) in a file whose
    autocast regions all run in bfloat16 (`dtype=torch.bfloat16`, or CPU autocast's default).

    Also a scaler enabled by the very flag every autocast region of the file is enabled by
    (`GradScaler(enabled=args.amp)` with `autocast(..., enabled=args.amp)`), and a dtype
    passed through `autocast(**helper(args))` where a function of the file returns a dict
    literal.

    Across files: a scaler created enabled in a file that opens no region itself, whose every
    `scale` happens in functions of other files it is passed to (`train_one_epoch(...,
    scaler)` in engine.py, followed by the cross-file GradScaler protocol), when each of those
    functions opens autocast itself and every region it opens runs in bfloat16. The message
    names those functions and their regions.

    A region whose dtype is a class attribute (`torch.autocast("cuda", dtype=self.autocast_dtype)`)
    runs in the dtype of whichever class is `self`: the class and its project subclasses, each
    reading the first class-body binding along its bases (sd-scripts' `SdxlNetworkTrainer`
    overriding `autocast_dtype = torch.bfloat16` in another file). Where they disagree, the
    scaler is reported for the classes under which every region of the file runs in bfloat16,
    named in the message, without a fix (the other classes need the scaler).

    ## Why is this bad?
    Loss scaling exists for float16's narrow range (gradients below 6e-8 flush to zero).
    bfloat16 has float32's exponent range, so the scaler has nothing to protect and only costs:
    every `scaler.step` reads the inf check back to the host (`found_inf.item()`, a GPU→CPU
    sync per step), and steps are skipped while the scale backs off. Nothing is raised. A scaler
    gated on the dtype, as nanoGPT writes it
    (`torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))`), a scaler created only on one
    path (`GradScaler() if fp16 else None`), or a file with any float16 or unknown-dtype region
    is not reported; unless that path is the one every region is enabled on (`self.scaler =
    None` then `if cfg.autocast: self.scaler = GradScaler()`, every region opened with
    `enabled=cfg.autocast`, as written): then the scaler exists exactly when bf16 runs.

    ## Example
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda", enabled=False)  # or enabled=(amp_dtype == torch.float16)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).mean()
    scaler.scale(loss).backward()
    ```

    ## Fix safety
    **Unsafe**: the fix creates the scaler with `enabled=False` (its `scale`, `unscale_`, `step`
    and `update` then pass through). It changes behaviour: a step whose gradients hold inf/NaN
    is then applied instead of skipped, which bf16 training normally guards against with
    gradient clipping or a loss check. Where the dtype is configurable, gate the scaler on it
    by hand: `enabled=(amp_dtype == torch.float16)`.
    """

    code = "AMP124"
    name = "scaler-with-bf16"
    severity = Severity.INFO
    fix_safety = "unsafe"
    triggers = ("GradScaler",)

    flag = [
        Flag(
            "import torch\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n",
            unsafe=True,
        ),
        Flag(  # an explicit enabled=True on self, bf16 through an alias
            "import torch\n"
            "from torch.cuda import amp as tamp\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = tamp.GradScaler(enabled=True)\n"
            "        self.ctx = torch.autocast('cuda', dtype=torch.bfloat16)\n"
            "    def step(self, x):\n"
            "        with self.ctx:\n"
            "            loss = self.model(x)\n"
            "        self.scaler.scale(loss).backward()\n",
            fixed="import torch\n"
            "from torch.cuda import amp as tamp\n"
            "class Trainer:\n"
            "    def __init__(self):\n"
            "        self.scaler = tamp.GradScaler(enabled=False)\n"
            "        self.ctx = torch.autocast('cuda', dtype=torch.bfloat16)\n"
            "    def step(self, x):\n"
            "        with self.ctx:\n"
            "            loss = self.model(x)\n"
            "        self.scaler.scale(loss).backward()\n",
            unsafe=True,
        ),
        Flag(  # the scaler and the bf16 region share one flag: the scaler is on whenever bf16 runs
            "import torch\n"
            "scaler = torch.cuda.amp.GradScaler(enabled=args.amp)\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=args.amp):\n"
            "        loss = model(x, y)\n"
            "    scaler.scale(loss).backward()\n",
            fixed="import torch\n"
            "scaler = torch.cuda.amp.GradScaler(enabled=False)\n"
            "for x, y in loader:\n"
            "    with torch.autocast('cuda', dtype=torch.bfloat16, enabled=args.amp):\n"
            "        loss = model(x, y)\n"
            "    scaler.scale(loss).backward()\n",
            unsafe=True,
        ),
        Flag(  # the dtype arrives through a helper of the file returning a dict literal
            "import torch\n"
            "def get_autocast_args(args):\n"
            "    return {'device_type': 'cuda', 'dtype': torch.bfloat16, 'enabled': args.amp}\n"
            "scaler = torch.amp.GradScaler('cuda')\n"
            "with torch.autocast(**get_autocast_args(args)):\n"
            "    loss = model(x)\n"
            "scaler.scale(loss).backward()\n",
            fixed="import torch\n"
            "def get_autocast_args(args):\n"
            "    return {'device_type': 'cuda', 'dtype': torch.bfloat16, 'enabled': args.amp}\n"
            "scaler = torch.amp.GradScaler('cuda', enabled=False)\n"
            "with torch.autocast(**get_autocast_args(args)):\n"
            "    loss = model(x)\n"
            "scaler.scale(loss).backward()\n",
            unsafe=True,
        ),
    ]
    clean = [
        # the scaler's flag is not the region's: it may be on for another (fp16) path
        "import torch\n"
        "scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16, enabled=args.amp):\n"
        "    loss = model(x)\n"
        "scaler.scale(loss).backward()\n",
        # the helper's dtype depends on its branch
        "import torch\n"
        "def get_autocast_args(args):\n"
        "    if args.bf16:\n"
        "        return {'device_type': 'cuda', 'dtype': torch.bfloat16}\n"
        "    return {'device_type': 'cuda', 'dtype': torch.float16}\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast(**get_autocast_args(args)):\n"
        "    loss = model(x)\n"
        "scaler.scale(loss).backward()\n",
        # nanoGPT: the scaler is gated on the dtype
        "import torch\n"
        "ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]\n"
        "ctx = torch.amp.autocast(device_type=device_type, dtype=torch.bfloat16)\n"
        "scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))\n"
        "with ctx:\n"
        "    logits, loss = model(X, Y)\n"
        "scaler.scale(loss).backward()\n",
        # float16 autocast: the scaler is needed
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    loss = model(x)\n"
        "scaler.scale(loss).backward()\n",
        # the dtype is configured at run time
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast('cuda', dtype=amp_dtype):\n"
        "    loss = model(x)\n"
        "scaler.scale(loss).backward()\n",
        # a scaler only on the fp16 path
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda') if args.fp16 else None\n"
        "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    loss = model(x)\n",
        # both precisions in one file
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda')\n"
        "def train_fp16(x):\n"
        "    with torch.autocast('cuda', dtype=torch.float16):\n"
        "        return model(x)\n"
        "def eval_bf16(x):\n"
        "    with torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "        return model(x)\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        scalers = facts.scalers
        if not scalers.any:
            return
        regions = self._regions(facts)
        local = bool(regions) and all(r.dtype == "bfloat16" for r in regions)
        classes = _bf16_classes(regions) if regions and not local else []
        local = local or bool(classes)
        remote = callee_regions(facts.entries) if not regions else {}
        if not local and not remote:
            return
        # several classes can be `self` where a region reads its dtype from a class attribute:
        # the hazard holds for those whose every region of the file is bfloat16
        every = "every autocast region of this file runs in bfloat16" if not classes else (
            "every autocast region of this file runs in bfloat16 when `self` is "
            + " or ".join(classes) + " (a class attribute read as the dtype: "
            + "; ".join(f"{name}: {dtype}" for name, dtype in _options(regions)) + ")")
        advice = ("create it with `enabled=False`, or gate it: `enabled=(amp_dtype == torch.float16)`"
                  if not classes else "gate it on the dtype the region reads: "
                  "`enabled=(<that dtype> == torch.float16)`")
        for ref, info in scalers.infos.items():
            guard = None
            if info.maybe_none:
                guard = self._guarded_by_region_flag(facts, info, regions) if local else None
                if guard is None:
                    continue
            if not local:  # no region here: the losses it scales come from other files
                if info.enabled is Enabled.TRUE:
                    yield from self._across_files(facts, ref, info, remote)
                continue
            if guard is not None and info.enabled is Enabled.TRUE:
                when = f"created only when the autocast regions are enabled (`if {guard}:`), and"
            elif info.enabled is Enabled.TRUE:
                when = "enabled while"
            elif info.enabled is Enabled.MAYBE and self._same_flag(facts, info, regions):
                flag = _code(self._enabled_arg(facts, info.constructions[0]))
                when = f"enabled by the same flag (`{flag}`) as the autocast regions, and"
            else:
                continue
            for call in info.constructions:
                yield self.report(
                    call,
                    f"GradScaler {when} {every} "
                    "(line {region_line}): bf16 needs no loss scaling, the scaler only "
                    f"adds a host sync per step and skipped steps; {advice}",
                    # disabling it would break the classes that run float16: no fix
                    fix=self._fix(facts, call) if not classes else None,
                    related={"region_line": regions[0].origin},
                )

    def _across_files(self, facts, ref, info, remote) -> Iterable[Diagnostic]:
        """Every `scale` of this scaler happens in functions of other files (composed through
        the calls that pass it), each of which opens autocast regions itself, all bfloat16."""
        scales = [e for flow in facts.scalers.composed for e in flow.events
                  if e.kind == "scale" and e.scaler == ref]
        if not scales or any(e.remote is None or e.origin is None for e in scales):
            return
        callees = []
        for event in scales:
            through = remote_entry(facts.scalers, event.origin)
            entry = remote.get(through.callee) if through is not None else None
            if entry is None or any(dtype != "bfloat16" for dtype in entry.dtypes):
                return
            if entry not in callees:
                callees.append(entry)
        where = ", ".join(f"`{e.callee.split(': ', 1)[1]}` (autocast at {e.cite})" for e in callees)
        for call in info.constructions:
            yield self.report(
                call,
                "GradScaler enabled while it scales only losses of functions of other files "
                f"whose every own autocast region runs in bfloat16: {where}, through the call at line "
                "{call_line}: bf16 needs no loss scaling, the scaler only adds a host sync per "
                "step and skipped steps; create it with `enabled=False`, or gate it: "
                "`enabled=(amp_dtype == torch.float16)`",
                fix=self._fix(facts, call),
                related={"call_line": scales[0].origin},
            )

    def _same_flag(self, facts, info, regions: List[Region]) -> bool:
        """`GradScaler(enabled=args.amp)` in a file whose every region is
        `autocast(dtype=torch.bfloat16, enabled=args.amp)`: the scaler is on exactly when bf16
        runs. Flags are compared as written; a region entered on one path only (MAYBE without
        its own flag) does not count."""
        if not info.constructions:
            return False
        flags = set()
        for call in info.constructions:
            expr = self._enabled_arg(facts, call)
            if expr is None or literal_bool(expr) is not None:
                return False
            flags.add(_code(expr))
        if len(flags) != 1:
            return False
        return all(
            r.enabled_expr is not None and _code(r.enabled_expr) in flags for r in regions
        )

    @staticmethod
    def _guarded_by_region_flag(facts, info, regions: List[Region]) -> Optional[str]:
        """A scaler that is `None` on some paths (`self.scaler = None` then `if cfg.autocast:
        self.scaler = GradScaler()`, or `GradScaler() if cfg.autocast else None`) exists exactly
        when every region of the file is enabled: each construction sits in the first arm of an
        `if` (or `... if flag else None`) testing the flag, as written, that every region is
        enabled by. The flag's text; None otherwise."""
        flags = {_code(r.enabled_expr) for r in regions}
        if len(flags) != 1 or "" in flags or not info.constructions:
            return None
        (flag,) = flags
        for call in info.constructions:
            site = facts.scalers.sites.get(id(call))
            function = site.frame.function if site is not None else None
            scope = function.node if function is not None else facts.tree.module_frame.node
            if not any(_code(test) == flag for test in _guards(scope, call)):
                return None
        return flag

    @staticmethod
    def _enabled_arg(facts, call: cst.Call) -> Optional[cst.BaseExpression]:
        site = facts.scalers.sites.get(id(call))
        if site is None:
            return None
        positional = SCALER_APIS.get(resolve_expr(call.func, site.frame) or "")
        if positional is None or any(a.star for a in call.args):
            return None
        return bound_arguments(call, positional).get("enabled")

    @staticmethod
    def _regions(facts) -> List[Region]:
        found = [r for _, _, r in facts.regions.explicit_regions() if r.active]
        for frame in facts.tree.frames:
            region = frame.region if frame.kind == "function" else None
            if isinstance(region, Region) and region.active and region.kind == "decorator":
                found.append(region)
        return found

    def _fix(self, facts, call: cst.Call):
        site = facts.scalers.sites.get(id(call))
        if site is None:
            return None
        qualified = resolve_expr(call.func, site.frame)
        positional = SCALER_APIS.get(qualified or "")
        if positional is None or any(a.star for a in call.args):
            return None
        bound = bound_arguments(call, positional)
        if "enabled" in bound:
            args = []
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "enabled":
                    arg = arg.with_changes(value=cst.Name("False"))
                elif arg.keyword is None and arg.value is bound["enabled"]:
                    return None  # positional `enabled`: leave it to a human
                args.append(arg)
            new = call.with_changes(args=args)
        else:
            args = list(call.args)
            if args:
                args[-1] = args[-1].with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                )
            new = with_args(call, [*args, kwarg("enabled", cst.Name("False"))])
        return self.fix(Applicability.UNSAFE, "Create the scaler disabled (`enabled=False`)",
                        {call: new})


def _bf16_classes(regions: List[Region]) -> List[str]:
    """The classes that, as `self`, make every region bfloat16: the regions that read their
    dtype through the classes (Region.dtype_by_class) all read the same options, and every
    other region is bfloat16."""
    options = {r.dtype_by_class for r in regions if r.dtype_by_class is not None}
    if len(options) != 1 or any(r.dtype != "bfloat16" for r in regions if r.dtype_by_class is None):
        return []
    return [name for name, dtype in next(iter(options)) if dtype == "bfloat16"]


def _options(regions: List[Region]):
    return next(r.dtype_by_class for r in regions if r.dtype_by_class is not None)


def _guards(scope: cst.CSTNode, call: cst.Call) -> List[cst.BaseExpression]:
    """The tests of the `if` statements (with no `else`) and `x if test else None` expressions
    in `scope` whose first arm holds `call`."""
    found = []
    for node in iter_nodes(scope):
        if isinstance(node, cst.If) and node.orelse is None:
            arm = node.body
        elif isinstance(node, cst.IfExp) and isinstance(node.orelse, cst.Name) and node.orelse.value == "None":
            arm = node.body
        else:
            continue
        if any(inner is call for inner in iter_nodes(arm)):
            found.append(node.test)
    return found


def _code(node: Optional[cst.CSTNode]) -> str:
    return "" if node is None else " ".join(cst.Module(body=[]).code_for_node(node).split())
