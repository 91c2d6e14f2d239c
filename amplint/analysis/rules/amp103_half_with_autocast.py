"""AMP103 half-with-autocast."""

from __future__ import annotations

import re
from typing import Iterable, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.diagnostics import Applicability, Diagnostic, Severity
from amplint.analysis.facts.amp_scaling import steps_only_scaling_optimizers
from amplint.analysis.facts.cast_back import cast_back_between
from amplint.analysis.facts.dropped_forwards import dropped_only_names
from amplint.analysis.facts.branch_arms import exclusive_arms
from amplint.analysis.facts.fp16 import dtype_of
from amplint.analysis.facts.half_callees import calls_param_entries, returns_half_entries
from amplint.analysis.facts.half_reads import half_read_in_region
from amplint.analysis.facts.names import visible_scopes
from amplint.analysis.facts.returned_casts import moved_root
from amplint.analysis.facts.syntax import literal_str, self_attr
from amplint.analysis.facts.tree import CallSite, Frame, dotted_name, iter_nodes, receiver_root
from amplint.analysis.rules import Flag, Rule
from amplint.analysis.rules._util import argument, region_note, with_args
from amplint.analysis.rules._returned_half import returned_to_region

_MODEL_NAME = re.compile(r"(model|net|module|encoder|decoder|backbone|classifier|generator|discriminator)", re.I)


class HalfWithAutocast(Rule):
    """## What it does
    Finds `.half()`, `.bfloat16()` and `.to(torch.float16)` (also `.to(device, dtype=torch.half)`)
    on a model or its inputs in code that also uses autocast: inside an autocast `with`, or on a
    name that the same function then uses inside its autocast region.

    A wrapper that halves the module it is given in its `__init__` and stores it
    (`self.add_module("module", module.half())`, Megatron's `Float16Module`) counts when a method
    of the wrapper that reads the stored module runs under autocast (in the file, or reached by a
    region of another file).

    Also across files: a model cast to half (`model.half()`, `model = build(...).half()`) and then
    passed to a function of another file that calls that parameter inside an autocast region of
    its own (`train_one_epoch(model, ...)` in engine.py running `model(samples)` under
    `torch.cuda.amp.autocast()`). The message names the call and the region. And the other
    way: a factory of another file (a function, classmethod or staticmethod, or a short chain
    of them) returns the model it casts (`model.half(); return model`), and the caller runs the
    returned value under an autocast region of its own; a cast under `if flag:` counts only
    where that call leaves the flag on (`load_model(..., fp16=False)` halves nothing). The
    factory may return the model in a tuple (`model, preprocess = clip.load(...)`) and may have
    it halved in place by a helper (CLIP's `convert_weights(model)` running `model.half()`);
    a `model.float()` on every path of a factory after that makes it float32 again.

    A `.to(dtype=...)` whose dtype is a field of a dataclass config counts when the field
    chain defaults to a half dtype and nothing in the project changes it (lingua's
    `dtype=args.model.param_dtype` with `args: TrainArgs`, `model: ModelArgs =
    field(default_factory=ModelArgs)`, `param_dtype: torch.dtype = torch.float16`; no
    assignment of the field, no construction with arguments, no config file naming it, no
    OmegaConf-style loader).

    ## Why is this bad?
    Autocast expects float32 weights and inputs and casts per operation. A model cast to half
    trains without an fp32 master copy: small updates round away and training stalls. With a
    GradScaler it fails outright: `ValueError: Attempting to unscale FP16 gradients.` (then the
    finding is an error). Half inputs to an autocast region are redundant at best.
    `.half()` in code with no autocast (pure half inference) is legitimate and not reported;
    nor is `.float()`, nor a half model cast back to float32 before the region runs it (a
    checkpoint or export format): `net = upsampler.export()` then `net = net.float()` (or the
    module's in-place `net.float()`, or `upsampler.export().float()`) as a statement of the same
    body, here or in the caller of another file's factory.

    ## Example
    ```python
    model = Net().cuda().half()
    for x, y in loader:
        x = x.cuda().half()
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
    ```

    ## Use instead
    ```python
    model = Net().cuda()
    for x, y in loader:
        x = x.cuda()
        with torch.autocast("cuda"):
            loss = loss_fn(model(x), y)
    ```

    ## Fix safety
    For inputs the fix drops the cast (`x.cuda().half()` -> `x.cuda()`,
    `x.to(device, torch.float16)` -> `x.to(device)`); it is **unsafe** because code after it may
    rely on the half dtype (a custom kernel, a dtype check). For a model it is only a
    **suggestion**: dropping the cast doubles its memory, which may not fit.
    """

    code = "AMP103"
    name = "half-with-autocast"
    severity = Severity.WARNING
    fix_safety = "unsafe / suggestion"
    triggers = ("autocast", "optim_context", "auto_fp16")

    flag = [
        Flag(
            "import torch\n"
            "def train(model, loader, opt):\n"
            "    for x, y in loader:\n"
            "        x = x.cuda().half()\n"
            "        with torch.autocast('cuda'):\n"
            "            loss = model(x, y)\n",
            fixed="import torch\n"
            "def train(model, loader, opt):\n"
            "    for x, y in loader:\n"
            "        x = x.cuda()\n"
            "        with torch.autocast('cuda'):\n"
            "            loss = model(x, y)\n",
            unsafe=True,
        ),
        Flag(  # a model: suggestion only
            "import torch\n"
            "model = Net().cuda().half()\n"
            "scaler = torch.cuda.amp.GradScaler()\n"
            "with torch.cuda.amp.autocast():\n"
            "    loss = model(x).sum()\n",
        ),
        Flag(  # a model from a builder function: suggestion only, the message names it
            "import torch\n"
            "def main(cfg, loader):\n"
            "    model = build_model(cfg).cuda().half()\n"
            "    for x in loader:\n"
            "        with torch.autocast('cuda'):\n"
            "            out = model(x)\n",
        ),
        Flag(  # .to(device, dtype=half) inside the region
            "import torch\n"
            "with torch.autocast(device_type='cuda'):\n"
            "    out = model(images.to(device, dtype=torch.half))\n",
            fixed="import torch\n"
            "with torch.autocast(device_type='cuda'):\n"
            "    out = model(images.to(device))\n",
            unsafe=True,
        ),
        Flag(  # a wrapper halves the module it holds in __init__ (Megatron's Float16Module)
            "import torch\n"
            "class Float16Module(torch.nn.Module):\n"
            "    def __init__(self, module):\n"
            "        super().__init__()\n"
            "        self.add_module('module', module.half())\n"
            "    def forward(self, x):\n"
            "        return self.module(x)\n"
            "def train(net, x):\n"
            "    model = Float16Module(net)\n"
            "    with torch.autocast('cuda'):\n"
            "        return model(x)\n",
        ),
    ]
    clean = [
        # the same wrapper run only outside autocast (pure half inference), and one whose
        # region-run method never reads the half module
        "import torch\n"
        "class Float16Module(torch.nn.Module):\n"
        "    def __init__(self, module):\n"
        "        super().__init__()\n"
        "        self.module = module.half()\n"
        "        self.head = torch.nn.Linear(8, 2)\n"
        "    def forward(self, x):\n"
        "        return self.module(x)\n"
        "    def score(self, x):\n"
        "        return self.head(x)\n"
        "def infer(net, x):\n"
        "    model = Float16Module(net)\n"
        "    with torch.no_grad():\n"
        "        out = model(x.half())\n"
        "    with torch.autocast('cuda'):\n"
        "        return model.score(out.float())\n",
        # pure half inference, no autocast anywhere
        "import torch\n"
        "model = Net().cuda().half().eval()\n"
        "with torch.no_grad():\n"
        "    out = model(x.half())\n",
        # .float() and fp32 casts are fine; .half() on something the region never uses
        "import torch\n"
        "def evaluate(model, x):\n"
        "    cache = precompute(x).half()\n"
        "    with torch.autocast('cuda'):\n"
        "        return model(x.float())\n",
        # half inference in one function, autocast training in another
        "import torch\n"
        "def export(model):\n"
        "    model = model.half()\n"
        "    return model\n"
        "def train(model, x):\n"
        "    with torch.autocast('cuda'):\n"
        "        return model(x)\n",
        # a dtype variable is not a literal half cast
        "import torch\n"
        "with torch.autocast('cuda'):\n"
        "    q = q.to(target_dtype)\n",
        # inside enabled=False
        "import torch\n"
        "with torch.autocast('cuda', enabled=False):\n"
        "    y = x.half()\n",
    ]

    def check(self, ctx) -> Iterable[Diagnostic]:
        facts = ctx.facts
        casts = facts.fp16.half_casts
        if not casts:
            return
        severity = Severity.ERROR if facts.scalers.any else Severity.WARNING
        # every optimizer the file's scaler steps takes the scaling over (and keeps its weights)
        owned = facts.scalers.any and bool(steps_only_scaling_optimizers(facts, facts.entries))
        readers: dict = {}  # name -> scopes of the active regions reading it
        remote = calls_param_entries(facts.entries)
        returned = returns_half_entries(facts.entries)
        for index, site in enumerate(facts.tree.calls):
            if id(site.node) not in casts:
                continue
            passed = via = None
            mixed = self._mixed_with_autocast(facts, site, readers)
            if not mixed and self._is_model(facts, site):  # a returned input: where it goes is not read
                via = self._returned_in_region(facts, site, readers)
            if not mixed and via is None:
                passed = _passed_to_region(facts, site, index, remote) if remote else None
                entry = returned_to_region(site, returned, _cast_target(site)) if returned and passed is None else None
                if entry is not None:
                    if self._is_model(facts, site):
                        yield self._returned_report(site, entry, severity)
                    continue
                if passed is None:
                    stored = _stored_submodule(facts, site) or _stored_return(facts, site)
                    if stored is not None and self._is_model(facts, site):
                        yield self._wrapper_report(site, stored, severity, facts)
                    elif stored is None and (self._is_model(facts, site) or facts.bound_values.casts_instance(site.node)):
                        read = half_read_in_region(facts, site.node)
                        if read is not None:
                            yield self._bound_report(ctx, site, read, severity, facts)
                        elsewhere = facts.bound_values.half_read_elsewhere(site.node) if read is None else None
                        if elsewhere is not None:
                            yield self._elsewhere_report(site, elsewhere, severity)
                    continue
                if not self._is_model(facts, site):
                    continue
            model = self._is_model(facts, site)
            field = facts.fp16.field_cites.get(id(site.node))  # `dtype=args.model.param_dtype`
            note = f" ({field})" if field else ""
            related = {}
            if via is not None:  # `model = build(cfg)`: the function returns the cast model
                callee = ctx.module.code_for_node(via.node.func)
                note += f" (returned by `{callee}(...)` at line {{call_line}}, which runs it under autocast)"
                related = {"call_line": via.node}
            what = _model_words(site) + note if model else ""
            if passed is not None:
                call, entry = passed
                name = call.node.func.value  # type: ignore[union-attr]
                message = (
                    f"half cast of {what} mixed with autocast in another file: it is passed to "
                    f"`{name}` (line {{call_line}}), which calls it under the autocast region at "
                    f"{entry.where}; its weights train without an fp32 master copy (with a "
                    "GradScaler, `unscale_` raises 'ValueError: Attempting to unscale FP16 "
                    "gradients.'); keep the model fp32"
                )
                yield self.report(site.node, message, severity=severity,
                                  related={"call_line": call.node})
                continue
            if model and owned:
                continue  # the stepped optimizer owns the scaling and the weights (FusedLAMBAMP)
            if model and facts.scalers.any:
                message = (
                    f"half cast of {what} mixed with autocast and a GradScaler: "
                    "`scaler.unscale_`/`step` raises 'ValueError: Attempting to unscale FP16 "
                    "gradients.'; keep the model fp32 and let autocast cast per op"
                )
            elif model:
                message = (
                    f"half cast of {what} mixed with autocast: its weights train without an fp32 "
                    "master copy (small updates round away); keep the model fp32"
                )
            else:
                message = (
                    f"half cast of an input{note} mixed with autocast: autocast casts fp32 inputs per op; "
                    "casting first loses precision where autocast keeps fp32 (losses, norms)"
                )
            fix = None if model or via is not None else self._fix(site)
            yield self.report(site.node, message, fix=fix, severity=severity, related=related or None)

    def _returned_report(self, site: CallSite, entry, severity) -> Diagnostic:
        if entry.scaler:
            severity = Severity.ERROR
        what = _model_words(site)
        scaler = (" (with the GradScaler there, `unscale_` raises 'ValueError: Attempting to unscale FP16 "
                  "gradients.')") if entry.scaler else ""
        if entry.passer:  # a helper halving its parameter in place (CLIP's convert_weights)
            how = (f"`{entry.function}` halves in place the model `{entry.passer}` hands it; it comes "
                   f"back from `{entry.call}` and runs")
        else:
            how = f"`{entry.function}` returns it to `{entry.call}`, which runs it"
        message = (
            f"half cast of {what} mixed with autocast in another file: {how} under the autocast "
            f"region at {entry.region}; its weights train without an fp32 master copy{scaler}; "
            "keep the model fp32"
        )
        return self.report(site.node, message, severity=severity)

    def _bound_report(self, ctx, site: CallSite, read, severity, facts) -> Diagnostic:
        expr, with_node = read
        scaler = (" (with a GradScaler, `unscale_` raises 'ValueError: Attempting to unscale FP16 "
                  "gradients.')") if facts.scalers.any else ""
        message = (
            f"half cast of {_model_words(site)} mixed with autocast: the cast model reaches "
            f"`{_short_code(ctx, expr)}` (line {{read_line}}), read under the autocast region at line "
            f"{{region_line}}; its weights train without an fp32 master copy{scaler}; keep the model fp32"
        )
        return self.report(site.node, message, severity=severity,
                           related={"read_line": expr, "region_line": with_node})

    def _elsewhere_report(self, site: CallSite, entry, severity) -> Diagnostic:
        message = (
            f"half cast of {_model_words(site)} mixed with autocast in another file: the cast model "
            f"reaches `{entry.code}` at {entry.read}, read under the autocast region at {entry.region}; "
            "its weights train without an fp32 master copy (with a GradScaler, `unscale_` raises "
            "'ValueError: Attempting to unscale FP16 gradients.'); keep the model fp32"
        )
        return self.report(site.node, message, severity=severity)

    def _wrapper_report(self, site: CallSite, stored, severity, facts) -> Diagnostic:
        cls, attr, method, region = stored
        note, related = region_note(region)
        scaler = (" (with a GradScaler, `unscale_` raises 'ValueError: Attempting to unscale FP16 "
                  "gradients.')") if facts.scalers.any else ""
        receiver = _strip_conversions(site.node.func.value)  # type: ignore[union-attr]
        if self_attr(receiver) == attr:  # `self.module.half()`: halved in place
            what = f"half cast of the module `self.{attr}` mixed with autocast: `{cls}.__init__` halves it"
        else:
            what = (f"half cast of {_model_words(site)} mixed with autocast: `{cls}.__init__` stores it "
                    f"as `self.{attr}`")
        message = (
            f"{what}, and `{cls}.{method}` runs it under autocast {note}; its weights train "
            f"without an fp32 master copy{scaler}; keep the model fp32"
        )
        return self.report(site.node, message, severity=severity, related=related)

    @staticmethod
    def _explicit_region(facts, frame: Frame):
        current: Optional[Frame] = frame
        while current is not None and current.kind == "with":
            if current.region is not None:
                return current.region
            current = current.parent
        if current is not None and current.kind == "function" and current.region is not None:
            return current.region
        return None

    def _mixed_with_autocast(self, facts, site: CallSite, readers: dict) -> bool:
        region = self._explicit_region(facts, site.frame)
        if region is not None:
            return region.active
        # Outside a region: the cast value must be used inside a region of the same scope.
        target = _cast_target(site)
        if target is None:
            return False
        if target == "self":  # `self.vae.to(dtype=torch.float16)`: the module is `self.vae`, not `self`
            target = _self_module(site) or target
        return self._read_in_region(facts, target, site.frame.scope, readers, site.node, site.line_stmt,
                                    lambda: self._is_model(facts, site))

    def _returned_in_region(self, facts, site: CallSite, readers: dict) -> Optional[CallSite]:
        """The call of the function around the cast, in this file, that gets the cast model back
        (facts/returned_casts.py) and binds it to a name a region of its scope reads."""
        returned = facts.returned_casts
        if not returned:
            return None
        for call in facts.tree.calls:
            found = returned.get(id(call.node))
            if found is None or found[1] is not site:
                continue
            target = _returned_target(call)
            if target is not None and self._read_in_region(facts, target, call.frame.scope, readers, call.node,
                                                           call.line_stmt, lambda: True):
                return call
        return None

    @staticmethod
    def _read_in_region(facts, target: str, scope: Frame, readers: dict, node: cst.CSTNode,
                        stmt: Optional[cst.CSTNode] = None, module=None) -> bool:
        """A region reads `target` in `scope` (or a module-level `target` in a function) where
        `node` may also run: not in the other arm of the `if` that holds `node` (EVA's
        DeepSpeed `samples.half()` arm and its autocast arm, facts/branch_arms.py), and not
        after a statement casting it back to float32 (`model = model.float()`, cast_back.py)."""
        if None not in readers:  # built once for the file (the None key marks it built)
            readers[None] = ()
            for with_node, body_frame, region in facts.regions.explicit_regions():
                if region.active:
                    # a name read only by forwards whose results are dropped: no number comes of it
                    names = _loaded_names(with_node.body) - dropped_only_names(with_node.body, body_frame)
                    for name in names | _loaded_self_attrs(with_node.body):
                        readers.setdefault(name, []).append((body_frame.scope, with_node))
        arms: dict = readers.setdefault(("arms",), {})  # not a name: parents maps per function
        for region_scope, with_node in readers.get(target, ()):
            # the same scope, or a module-level name read (not rebound) by a function's region
            if region_scope is scope:
                if not exclusive_arms(scope.node, node, with_node, arms) and not (
                        stmt is not None
                        and cast_back_between(scope.node, stmt, with_node, tuple(target.split(".")),
                                              module is not None and module())):
                    return True
            elif scope.kind == "module" and target not in region_scope.bindings:
                return True
        return False

    @staticmethod
    def _is_model(facts, site: CallSite) -> bool:
        func = site.node.func
        assert isinstance(func, cst.Attribute)
        receiver = func.value
        if facts.callgraph.class_of_value(receiver) is not None:
            return True
        root = _strip_conversions(receiver)
        if isinstance(root, cst.Call):
            name = dotted_name(root.func)
            if name and (name[-1][:1].isupper() or _MODEL_NAME.search(name[-1])):
                return True  # `Net(...)`, `build_model(cfg)`, `timm.create_model(...)`
            target = _cast_target(site)  # `model = make(cfg).cuda().half()`
            return bool(target) and bool(_MODEL_NAME.search(target))
        name = dotted_name(root) if isinstance(root, (cst.Name, cst.Attribute)) else None
        if name is None:
            return False
        if facts.callgraph.class_of_instance(root, site.frame) is not None:
            return True
        return bool(_MODEL_NAME.search(name[-1]))

    def _fix(self, site: CallSite):
        call = site.node
        stmt = site.line_stmt
        if stmt is not None and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
            if stmt.body[0].value is call:
                return None  # `x.half()` alone does nothing for a tensor
        func = call.func
        assert isinstance(func, cst.Attribute)
        method = func.attr.value
        if method in ("half", "bfloat16"):
            return self.fix(Applicability.UNSAFE, f"Drop `.{method}()`", {call: func.value})
        kept = [
            a for a in call.args
            if not (a.keyword is None or a.keyword.value == "dtype")
            or dtype_of(a.value, site.frame) is None
        ]
        if kept and all(a.keyword is not None and a.keyword.value != "device" for a in kept):
            return None  # `.to(dtype=..., non_blocking=True)`: nothing meaningful left
        if not kept:
            return self.fix(Applicability.UNSAFE, "Drop the half cast", {call: func.value})
        return self.fix(
            Applicability.UNSAFE, "Drop the half dtype", {call: with_args(call, kept)}
        )


_CONVERSIONS = {
    "cuda", "cpu", "to", "half", "float", "bfloat16", "double", "eval", "train", "type",
    "requires_grad_", "contiguous", "detach", "clone", "share_memory",
}


def _stored_return(facts, site: CallSite):
    """As `_stored_submodule`, for a cast a function of this file returns (facts/returned_casts.py)
    to a call whose value `__init__` stores: `self.mm_projector = build_vision_projector(cfg)`."""
    returned = facts.returned_casts
    if not returned:
        return None
    for call in facts.tree.calls:
        found = returned.get(id(call.node))
        if found is not None and found[1] is site:
            stored = _stored_submodule(facts, call, moved=True)
            if stored is not None:
                return stored
    return None


def _stored_submodule(facts, site: CallSite, moved: bool = False):
    """(class, attribute, method, region) when the cast sits straight in a class's `__init__`
    and its value is stored in the instance (`self.module = module.half()`,
    `self.add_module("module", module.half())`, Megatron's Float16Module) or it halves one the
    instance holds in place (`self.module.half()`, DeepSpeed's engine), and a method of the
    class that reads that attribute runs under an active region (one of the file, or one the
    project pass found reaching it)."""
    function = site.frame.function
    cls = function.parent if function is not None else None
    if function is None or function.name != "__init__" or cls is None or cls.kind != "class" \
            or site.frame.scope is not function:
        return None
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    attr = None
    if moved:  # `site` is a call returning the cast value: `self.proj = build(cfg).cuda()`
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and moved_root(small.value, site.frame) is site.node:
            attr = self_attr(small.targets[0].target)
    elif isinstance(small, cst.Assign) and small.value is site.node and len(small.targets) == 1:
        attr = self_attr(small.targets[0].target)
    elif isinstance(small, cst.Expr) and small.value is site.node:  # `self.module.half()` in place
        attr = self_attr(_strip_conversions(site.node.func.value))  # type: ignore[union-attr]
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if self_attr(call.func) == "add_module" and len(call.args) == 2 and call.args[1].value is site.node \
                and isinstance(call.args[0].value, cst.SimpleString) and call.args[0].keyword is None:
            attr = literal_str(call.args[0].value)
    if not attr:
        return None
    for name, method in cls.functions.items():
        if name == "__init__":
            continue
        region = facts.active_region(method)
        if region is None:
            continue
        if any(self_attr(node) == attr for node in iter_nodes(method.node) if isinstance(node, cst.Attribute)):
            return cls.name, attr, name, region
    return None


def _short_code(ctx, expr: cst.BaseExpression) -> str:
    code = ctx.module.code_for_node(expr)
    return code if len(code) <= 40 else code[:37] + "..."


def _strip_conversions(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`nn.Sequential(...).cuda().eval()` -> `nn.Sequential(...)`; `x.to(d)` -> `x`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _CONVERSIONS
    ):
        expr = expr.func.value
    return expr


def _model_words(site: CallSite) -> str:
    """"the model `model`" for `model = build_model(cfg).cuda().half()` and `model.half()`;
    "a model" when no name holds it."""
    name = _cast_target(site)
    if name is None:
        func = site.node.func
        assert isinstance(func, cst.Attribute)
        root = _strip_conversions(func.value)
        dotted = dotted_name(root) if isinstance(root, (cst.Name, cst.Attribute)) else None
        name = ".".join(dotted) if dotted else None
    return f"the model `{name}`" if name else "a model"


def _cast_target(site: CallSite) -> Optional[str]:
    """The name that ends up holding the cast value: `x = x.cuda().half()` -> "x";
    `model.half()` as a statement -> "model"."""
    stmt = site.line_stmt
    if stmt is None or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and small.value is site.node and len(small.targets) == 1:
        target = small.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(small, cst.Expr) and small.value is site.node:
        func = site.node.func
        assert isinstance(func, cst.Attribute)
        root = receiver_root(func.value)
        return root.value if isinstance(root, cst.Name) else None
    return None


def _returned_target(call: CallSite) -> Optional[str]:
    """The name a call's value is bound to, through module moves: `model = build(cfg).cuda()`."""
    stmt = call.line_stmt
    if stmt is None or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and moved_root(small.value, call.frame) is call.node:
        target = small.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    return None


def _passed_to_region(facts, site: CallSite, index: int, remote) -> Optional[Tuple[CallSite, object]]:
    """The later call in the same scope that passes the cast value (the name holding it) to a
    function of another file calling that parameter under autocast (EntryCallsParam)."""
    target = _cast_target(site)
    if target is None:
        return None
    scope = site.frame.scope
    for call in facts.tree.calls[index + 1:]:
        func = call.node.func
        if call.frame.scope is not scope or not isinstance(func, cst.Name) or func.value not in remote:
            continue
        if any(func.value in s.bindings and func.value not in s.imports for s in visible_scopes(call.frame)):
            continue  # a local name, not the import
        for position, name in remote[func.value].params:
            arg = argument(call.node, position, name)
            if arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == target:
                return call, remote[func.value]
    return None


def _loaded_names(node: cst.CSTNode) -> Set[str]:
    return {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}


def _loaded_self_attrs(node: cst.CSTNode) -> Set[str]:
    """"self.unet" for each `self.unet...` the node reads."""
    return {"self." + attr for attr in (self_attr(n) for n in iter_nodes(node) if isinstance(n, cst.Attribute))
            if attr is not None}


def _self_module(site: CallSite) -> Optional[str]:
    """"self.vae" for a cast statement `self.vae.to(dtype=torch.float16)` (also of a submodule,
    `self.vae.decoder.half()`): what a region must read to run the module cast in place."""
    func = site.node.func
    assert isinstance(func, cst.Attribute)
    dotted = dotted_name(_strip_conversions(func.value))
    return "self." + dotted[1] if dotted and len(dotted) > 1 and dotted[0] == "self" else None
