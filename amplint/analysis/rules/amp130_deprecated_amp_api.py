"""AMP130 deprecated-amp-api."""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Sequence, Set

import libcst as cst

from amplint.analysis.data.deprecated_amp import APIS, DEFAULT_DTYPE
from amplint.analysis.data.torch_versions import introduced, shown
from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.deprecated import (
    DeprecatedRef, DeprecatedRefs, ImportBinding, canonical, is_modern,
)
from amplint.analysis.facts.syntax import literal_bool
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import dotted_expr, kwarg


class DeprecatedAmpApi(Rule):
    """## What it does
    Finds the deprecated device-specific AMP APIs: `torch.cuda.amp.autocast`,
    `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd`/`custom_bwd`,
    `torch.cpu.amp.autocast` and `torch.cpu.amp.GradScaler`, in calls, `with` items and
    decorators (with or without parentheses), under any import spelling
    (`from torch.cuda.amp import autocast as ac`, `from torch.cuda import amp as tamp`,
    `import torch.cuda.amp as amp`). Version-gated fallbacks (`try: from torch.amp import ...
    except ImportError: from torch.cuda.amp import ...`, `... if hasattr(torch, "amp") else
    torch.cuda.amp...`, an `except` branch) are not reported.

    The body of a maximum-version test, or the `else` of a minimum-version test, is a fallback
    too; the body of a minimum-version test
    (`if digit_version(TORCH_VERSION) >= digit_version("1.6.0"):`) runs on current torch and
    is reported. A name also imported from another backend (`from torch.musa.amp import
    autocast` under an `if`) is reported without a fix.

    ## Why is this bad?
    Every call warns, and the APIs will be removed:
    ``FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use
    `torch.amp.autocast('cuda', args...)` instead.`` (likewise for `GradScaler`, and
    ``Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.``). Migrating by
    hand has a trap: the old `autocast` takes `enabled` first, the new one `device_type`, then
    `dtype` — `torch.amp.autocast("cuda", use_amp)` passes `use_amp` as the dtype.

    ## Example
    ```python
    from torch.cuda.amp import GradScaler, autocast

    scaler = GradScaler(2.0**14, enabled=use_amp)
    with autocast(use_amp):
        loss = model(x)
    ```

    ## Use instead
    ```python
    import torch

    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**14, enabled=use_amp)
    with torch.amp.autocast("cuda", enabled=use_amp):
        loss = model(x)
    ```

    ## Fix safety
    **Safe**. Each call becomes its `torch.amp` form with the device type first and every
    positional argument passed by keyword, so each keeps its meaning; `@custom_fwd` becomes
    `@torch.amp.custom_fwd(device_type="cuda")`. All of a file's rewrites are one edit: the
    calls, `import torch` when the file lacks it, and the deprecated imports, from which the
    names no longer used are removed (a name listed in `__all__` is kept). One difference is
    handled: without `dtype=` the old classes always use float16 (CPU: bfloat16) and the
    weight cache, while `torch.amp.autocast` inherits both from an enclosing region; an old
    autocast nested in another region therefore gets `dtype=` (and `cache_enabled=True` when
    the outer region sets it) written out. A global `torch.set_autocast_dtype(...)` is not
    seen. A deprecated API used as a value (`ctx = torch.cuda.amp.autocast`,
    `partial(torch.cuda.amp.autocast, ...)`) is reported without a fix.

    The replacements are newer than the APIs they replace: `torch.amp.autocast` needs torch
    >= 1.12, `torch.amp.GradScaler` >= 2.3, `torch.amp.custom_fwd`/`custom_bwd` >= 2.4. A project
    that supports an older torch (`target-torch = "1.8"` in `[tool.amplint]`, `--target-torch`,
    or read from its own requirement on torch: `torch>=1.8` in pyproject.toml, setup.cfg,
    setup.py, requirements*.txt or environment.yml) gets the finding without that fix, and the
    message says which version it needs ("not fixed: torch.amp.GradScaler needs torch >= 2.3;
    this project targets 1.8 (from requirements.txt)"). The table is
    amplint/analysis/data/torch_versions.py.
    """

    code = "AMP130"
    name = "deprecated-amp-api"
    severity = Severity.INFO
    fix_safety = "safe"
    triggers = ("cuda.amp", "cpu.amp", "torch.cuda import", "torch.cpu import")

    flag = [
        Flag(  # names bound once to the deprecated classes: reported where they are spelled,
            # not again at each call through the name (no fix rewrites `autocast()`)
            "import torch\n"
            "autocast = torch.cuda.amp.autocast\n"
            "scaler_cls = torch.cuda.amp.GradScaler\n"
            "def train(model, x):\n"
            "    scaler = scaler_cls()\n"
            "    with autocast():\n"
            "        loss = model(x)\n"
            "    scaler.scale(loss).backward()\n",
            count=2,
        ),
        Flag(  # positional enabled becomes a keyword; imports updated, `import torch` added
            "from torch.cuda.amp import GradScaler, autocast\n"
            "scaler = GradScaler(2.0**14, enabled=use_amp)\n"
            "for x, y in loader:\n"
            "    with autocast(use_amp):\n"
            "        loss = model(x, y)\n",
            fixed="import torch\n"
            "scaler = torch.amp.GradScaler(\"cuda\", init_scale=2.0**14, enabled=use_amp)\n"
            "for x, y in loader:\n"
            "    with torch.amp.autocast(\"cuda\", enabled=use_amp):\n"
            "        loss = model(x, y)\n",
            count=2,
        ),
        Flag(  # `from torch.cuda import amp as tamp`; bare and called custom_fwd/custom_bwd
            "import torch\n"
            "from torch.cuda import amp as tamp\n"
            "class Swish(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    @tamp.custom_fwd(cast_inputs=torch.float32)\n"
            "    def forward(ctx, x):\n"
            "        return x * torch.sigmoid(x)\n"
            "    @staticmethod\n"
            "    @tamp.custom_bwd\n"
            "    def backward(ctx, g):\n"
            "        return g\n",
            fixed="import torch\n"
            "class Swish(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    @torch.amp.custom_fwd(device_type=\"cuda\", cast_inputs=torch.float32)\n"
            "    def forward(ctx, x):\n"
            "        return x * torch.sigmoid(x)\n"
            "    @staticmethod\n"
            "    @torch.amp.custom_bwd(device_type=\"cuda\")\n"
            "    def backward(ctx, g):\n"
            "        return g\n",
            count=2,
        ),
        Flag(  # dotted forms, a decorator with parentheses, CPU autocast with a positional dtype
            "import torch as th\n"
            "class Net(th.nn.Module):\n"
            "    @th.cuda.amp.autocast()\n"
            "    def forward(self, x):\n"
            "        return self.body(x)\n"
            "def cpu_eval(model, x):\n"
            "    with th.cpu.amp.autocast(True, th.bfloat16):\n"
            "        return model(x)\n",
            fixed="import torch as th\n"
            "class Net(th.nn.Module):\n"
            "    @th.amp.autocast(\"cuda\")\n"
            "    def forward(self, x):\n"
            "        return self.body(x)\n"
            "def cpu_eval(model, x):\n"
            "    with th.amp.autocast(\"cpu\", enabled=True, dtype=th.bfloat16):\n"
            "        return model(x)\n",
            count=2,
        ),
        Flag(  # nested in a bfloat16 region: the old default dtype is written out
            "import torch\n"
            "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "    h = encoder(x)\n"
            "    with torch.cuda.amp.autocast():\n"
            "        out = head(h)\n",
            fixed="import torch\n"
            "with torch.autocast('cuda', dtype=torch.bfloat16):\n"
            "    h = encoder(x)\n"
            "    with torch.amp.autocast(\"cuda\", dtype=torch.float16):\n"
            "        out = head(h)\n",
        ),
        Flag(  # a value, not a call: reported, not rewritten; the import stays
            "import torch\n"
            "from contextlib import suppress\n"
            "amp_autocast = torch.cuda.amp.autocast if args.amp else suppress\n"
            "with amp_autocast():\n"
            "    out = model(x)\n",
        ),
        Flag(  # a name still used elsewhere keeps its import
            "from torch.cuda.amp import GradScaler\n"
            "def build(cfg) -> GradScaler:\n"
            "    return GradScaler(enabled=cfg.amp)\n",
            fixed="import torch\n"
            "from torch.cuda.amp import GradScaler\n"
            "def build(cfg) -> GradScaler:\n"
            "    return torch.amp.GradScaler(\"cuda\", enabled=cfg.amp)\n",
        ),
        Flag(  # a lower-bound version check is no fallback: the call runs on current torch
            "import torch\n"
            "from mmcv.utils import TORCH_VERSION, digit_version\n"
            "if digit_version(TORCH_VERSION) >= digit_version('1.6.0'):\n"
            "    with torch.cuda.amp.autocast(enabled=True):\n"
            "        out = model(x)\n",
            fixed="import torch\n"
            "from mmcv.utils import TORCH_VERSION, digit_version\n"
            "if digit_version(TORCH_VERSION) >= digit_version('1.6.0'):\n"
            "    with torch.amp.autocast(\"cuda\", enabled=True):\n"
            "        out = model(x)\n",
        ),
        Flag(  # another backend's import of the name: still deprecated on CUDA; no rewrite
            "from torch.cuda.amp import autocast\n"
            "if IS_MUSA_AVAILABLE:\n"
            "    from torch.musa.amp import autocast\n"
            "with autocast(enabled=True):\n"
            "    out = model(x)\n",
        ),
        Flag(  # a function-local import: one finding, at the use; the import goes, its comment stays
            "import torch\n"
            "class Trainer:\n"
            "    def setup(self, cfg):\n"
            "        # scaler for fp16\n"
            "        from torch.cuda.amp import GradScaler\n"
            "        self.scaler = GradScaler(enabled=cfg.amp)\n",
            fixed="import torch\n"
            "class Trainer:\n"
            "    def setup(self, cfg):\n"
            "        # scaler for fp16\n"
            "        self.scaler = torch.amp.GradScaler(\"cuda\", enabled=cfg.amp)\n",
        ),
    ]
    clean = [
        # an upper-bound version check: the deprecated call runs on old torch only
        "import torch\n"
        "from mmcv.utils import TORCH_VERSION, digit_version\n"
        "if digit_version(TORCH_VERSION) < digit_version('1.10.0'):\n"
        "    scaler = torch.cuda.amp.GradScaler()\n"
        "else:\n"
        "    scaler = torch.amp.GradScaler('cuda')\n",
        # the CUDA import is the fallback of torch.amp's; another backend's import beside it
        "try:\n"
        "    from torch.amp import autocast\n"
        "except ImportError:\n"
        "    from torch.cuda.amp import autocast\n"
        "if IS_MUSA_AVAILABLE:\n"
        "    from torch.musa.amp import autocast\n"
        "with autocast('cuda'):\n"
        "    out = model(x)\n",
        # a function-local import used only in a type check
        "def is_amp(s):\n"
        "    from torch.cuda.amp import GradScaler\n"
        "    return isinstance(s, GradScaler)\n",
        # the current API
        "import torch\n"
        "scaler = torch.amp.GradScaler('cuda', enabled=use_amp)\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    loss = model(x)\n",
        # version-gated imports
        "try:\n"
        "    from torch.amp import GradScaler, autocast\n"
        "except ImportError:\n"
        "    from torch.cuda.amp import GradScaler, autocast\n"
        "scaler = GradScaler()\n"
        "with autocast():\n"
        "    loss = model(x)\n",
        # version-gated expressions (Lightning, timm)
        "import torch\n"
        "scaler = torch.amp.GradScaler(device=device) if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()\n"
        "ctx = torch.amp.autocast('cuda') if hasattr(torch, 'amp') else torch.cuda.amp.autocast()\n"
        "class NativeScaler:\n"
        "    def __init__(self, device='cuda'):\n"
        "        try:\n"
        "            self._scaler = torch.amp.GradScaler(device=device)\n"
        "        except (AttributeError, TypeError):\n"
        "            self._scaler = torch.cuda.amp.GradScaler()\n",
        # type checks and annotations do not warn
        "import torch\n"
        "def is_amp(s: torch.cuda.amp.GradScaler) -> bool:\n"
        "    return isinstance(s, (torch.cuda.amp.GradScaler, torch.amp.GradScaler))\n",
        # helpers of torch.cuda.amp that are not deprecated, a local `torch`
        "import torch\n"
        "ok = torch.cuda.amp.common.amp_definitely_not_available()\n"
        "def f(torch):\n"
        "    return torch.cuda.amp.autocast()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        if not any(t in ctx.source for t in self.triggers):
            return
        facts = ctx.facts
        walker = facts.deprecated
        if not walker.refs:
            return
        gated_names = self._gated_names(facts, walker)
        reported: List[DeprecatedRef] = []
        for ref in walker.refs:
            if ref.root.value in gated_names or walker.gated(ref.node, ref.frame):
                continue
            reported.append(ref)
        if not reported:
            return
        edits: Dict[cst.CSTNode, object] = {}
        fixed: List[DeprecatedRef] = []
        edited: Set[int] = set()  # ids of the rewritten nodes
        around: Set[int] = set()  # ids of those nodes and all their ancestors
        needs_torch = False
        for ref in reported:
            if not ctx.torch.allows(_replacement(ref)):
                continue  # the target torch lacks the replacement: reported without a fix
            result = self._rewrite(ctx, ref)
            if result is None:
                continue
            original, replacement, needs = result
            chain = walker.chain(original)  # ids of `original` and its ancestors
            if id(original) in around or any(key in edited for key in chain):
                continue  # nested in another rewrite: the next round takes it
            edits[original] = replacement
            edited.add(id(original))
            around.update(chain)
            fixed.append(ref)
            needs_torch = needs_torch or needs
        fix = None
        if edits:
            edits.update(self._import_edits(ctx, walker, fixed, edits))
            needed = max(introduced(_replacement(ref)) for ref in fixed)
            fix = self.fix(
                Applicability.SAFE,
                "Use the `torch.amp` API (device type first, positional arguments by keyword; "
                f"needs torch >= {shown(needed)}"
                + ("" if ctx.torch.version is not None else
                   ": set `target-torch` in [tool.amplint] if the project supports an older one")
                + ")",
                edits, ("torch",) if needs_torch else (),
            )
        for ref in reported:
            target, device, _ = APIS[ref.api]
            if target in ("custom_fwd", "custom_bwd"):
                new = f"torch.amp.{target}(args..., device_type='{device}')"
            else:
                new = f"torch.amp.{target}('{device}', args...)"
            message = (
                f"`{ref.api}` is deprecated: FutureWarning '`{ref.api}(args...)` is "
                f"deprecated. Please use `{new}` instead.'"
            )
            if ref.kind == "reference":
                message += "; it is used as a value here, so rewrite it by hand"
            elif ref.other_backend is not None:
                message += (
                    f"; the name is also imported as `{ref.other_backend}` on another path, "
                    "so rewrite it by hand"
                )
            elif not ctx.torch.allows(_replacement(ref)):
                message += "; " + ctx.torch.why_not(_replacement(ref))
            report_node = ref.call if ref.call is not None else ref.node
            yield self.report(report_node, message, fix=fix if ref in fixed else None)

    # -- what is gated --------------------------------------------------------------------
    @staticmethod
    def _gated_names(facts, walker: DeprecatedRefs) -> Set[str]:
        """Imported names bound more than once (`try: from torch.amp import autocast except
        ImportError: from torch.cuda.amp import autocast`), or by a gated import."""
        gated: Set[str] = set()
        other_imports = {bound for bound, target in walker.all_import_bindings
                         if is_modern(canonical(target))}
        for binding in walker.deprecated_imports:
            name = binding.bound
            rebound = any(name in frame.bindings for frame in facts.tree.frames)
            if name in other_imports or rebound or binding.gated:
                gated.add(name)
        return gated

    # -- the rewrite of one use -----------------------------------------------------------
    def _rewrite(self, ctx, ref: DeprecatedRef):
        if ref.kind == "reference" or ref.other_backend is not None:
            return None
        target, device, params = APIS[ref.api]
        try:
            torch_name, needs = ctx.facts.torch_name(ref.frame)
        except LookupError:
            return None
        func = dotted_expr(f"{torch_name}.amp.{target}")
        device_string = cst.SimpleString(f'"{device}"')
        if ref.kind == "decorator":
            if target not in ("custom_fwd", "custom_bwd"):
                return None
            call = cst.Call(func=func, args=[kwarg("device_type", device_string)])
            return ref.node, call, needs
        call = ref.call
        assert call is not None
        if any(arg.star == "*" for arg in call.args):
            return None
        if params is None:  # custom_fwd / custom_bwd: device_type is keyword-only
            if any(a.keyword is not None and a.keyword.value == "device_type" for a in call.args):
                return None
            positional = [a for a in call.args if a.keyword is None and not a.star]
            rest = [a for a in call.args if a not in positional]
            new_arg = kwarg("device_type", device_string)
            args = _join(positional + [new_arg] + rest, call.args)
            return call, call.with_changes(func=func, args=args), needs
        converted: List[cst.Arg] = []
        index = 0
        given: Set[str] = set()
        for arg in call.args:
            if arg.keyword is None and not arg.star:
                if index >= len(params):
                    return None
                name = params[index]
                index += 1
                arg = arg.with_changes(
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                )
            if arg.keyword is not None:
                given.add(arg.keyword.value)
            converted.append(arg)
        if target == "autocast" and not any(a.star for a in call.args):
            converted += self._pinned(ctx, ref, device, given, torch_name, call)
        first = cst.Arg(device_string)
        if call.args and len(call.args) > 1 and isinstance(call.args[0].comma, cst.Comma):
            first = first.with_changes(comma=call.args[0].comma)
        args = _join([first] + converted, call.args)
        return call, call.with_changes(func=func, args=args), needs

    @staticmethod
    def _pinned(ctx, ref: DeprecatedRef, device: str, given: Set[str], torch_name: str,
                call: cst.Call) -> List[cst.Arg]:
        """`dtype=`/`cache_enabled=` the old class fixed but `torch.amp.autocast` would inherit
        from an enclosing region."""
        region = ctx.facts.active_region(ref.frame)
        if region is None or region.device not in (None, device):
            return []
        enabled = {a.keyword.value: a.value for a in call.args if a.keyword is not None}.get(
            "enabled"
        )
        if enabled is None:
            positional = [a for a in call.args if a.keyword is None]
            enabled = positional[0].value if positional else None
        if literal_bool(enabled) is False:
            return []
        out: List[cst.Arg] = []
        default = DEFAULT_DTYPE[device]
        if "dtype" not in given and region.dtype != default:
            out.append(kwarg("dtype", dotted_expr(f"{torch_name}.{default}")))
        origin = region.root.origin
        if "cache_enabled" not in given and isinstance(origin, cst.Call):
            cache = next(
                (a.value for a in origin.args
                 if a.keyword is not None and a.keyword.value == "cache_enabled"),
                None,
            )
            if cache is not None and literal_bool(cache) is not True:
                out.append(kwarg("cache_enabled", cst.Name("True")))
        return out

    # -- imports --------------------------------------------------------------------------
    def _import_edits(self, ctx, walker: DeprecatedRefs, fixed: List[DeprecatedRef], edits) -> Dict:
        fixed_roots = {id(ref.root) for ref in fixed}
        used_through = {ref.root.value for ref in fixed}
        exported = _exported(ctx.source)
        removable: Dict[int, List[cst.ImportAlias]] = {}
        statements: Dict[int, ImportBinding] = {}
        for binding in walker.deprecated_imports:
            name = binding.bound
            if name not in used_through or name in exported:
                continue
            remaining = [n for n in walker.mentions.get(name, []) if id(n) not in fixed_roots]
            if remaining:
                continue
            removable.setdefault(id(binding.statement), []).append(binding.alias)
            statements[id(binding.statement)] = binding
        out: Dict[cst.CSTNode, object] = {}
        for key, aliases in removable.items():
            binding = statements[key]
            statement = binding.statement
            names = statement.names  # type: ignore[attr-defined]
            kept = [a for a in names if all(a is not r for r in aliases)]
            if kept:
                if kept[-1] is not names[-1]:
                    parenthesized = isinstance(statement, cst.ImportFrom) and statement.lpar
                    comma = names[-1].comma if parenthesized else cst.MaybeSentinel.DEFAULT
                    kept[-1] = kept[-1].with_changes(comma=comma)
                out[statement] = statement.with_changes(names=kept)
                continue
            line = binding.line
            if len(line.body) > 1:
                if any(walker.inside(node, line) for node in edits):
                    continue  # the line holds a rewritten call too: keep the import
                body = [s for s in line.body if s is not statement]
                body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                out[line] = line.with_changes(body=body)
            elif walker.only_statement(line):
                out[statement] = cst.Pass()
            else:
                out[line] = cst.RemovalSentinel.REMOVE
        self._keep_comments(walker, out, edits)
        return out

    @staticmethod
    def _keep_comments(walker: DeprecatedRefs, out: Dict, edits) -> None:
        """Comments above a removed import line move to the next statement that stays."""
        removed = [n for n, new in out.items() if new is cst.RemovalSentinel.REMOVE]
        removed.sort(key=lambda n: -walker.line_index.get(id(n), 0))
        for line in removed:
            if not any(l.comment is not None for l in line.leading_lines):
                continue
            follower = walker.next_statement(line)
            while follower is not None and out.get(follower) is cst.RemovalSentinel.REMOVE:
                follower = walker.next_statement(follower)
            if follower is None:
                continue
            current = out.get(follower, follower)
            if not isinstance(current, cst.SimpleStatementLine) and not (
                follower not in out and isinstance(current, cst.BaseCompoundStatement)
            ):
                continue
            if follower not in out and any(walker.inside(node, follower) for node in out):
                continue
            inner = [node for node in edits if walker.inside(node, follower)]
            if follower in out and inner:
                continue
            if not all(isinstance(edits[node], cst.CSTNode) for node in inner):
                continue
            for node in inner:  # the rewritten call on that line goes into the moved line
                current = current.deep_replace(node, edits.pop(node))
            out[follower] = current.with_changes(
                leading_lines=list(line.leading_lines) + list(current.leading_lines)
            )
        return out


def _replacement(ref: DeprecatedRef) -> str:
    """The torch name the fix of `ref` writes (a key of amplint.analysis.data.torch_versions)."""
    return f"torch.amp.{APIS[ref.api][0]}"


def _join(args: Sequence[cst.Arg], original: Sequence[cst.Arg]) -> List[cst.Arg]:
    """Arguments in a new order: separators between them, the original trailing comma kept."""
    out = list(args)
    trailing = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
    for index, arg in enumerate(out):
        if index < len(out) - 1:
            if not isinstance(arg.comma, cst.Comma):
                out[index] = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        else:
            out[index] = arg.with_changes(comma=trailing)
    return out


def _exported(source: str) -> Set[str]:
    if "__all__" not in source:
        return set()
    return set(re.findall(r"[\"'](\w+)[\"']", source.split("__all__", 1)[1][:2000]))
