"""Run a program before and after a fix in fp32 on the CPU, with seeded inputs, and compare.

The reference semantics of a *safe* fix: with autocast off, no half casts (`.half()` and
`Module.half()` are the identity), no CUDA (`.cuda()` is the identity) and a disabled
GradScaler, the fixed program computes the same outputs and gradients as the original.

`run(source)` executes the module, then calls every top-level function with seeded values
chosen by parameter name (and supplies the same values for free names of the module), and
returns every floating tensor it saw: module-level bindings, return values, and the gradients
(of the inputs, of the model's parameters) after a backward of the returned/bound losses.
A program that does not run as given (an unknown name, a shape it cannot guess) raises
`NotRunnable`: it is no evidence either way.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import warnings
from typing import Dict, Optional
from unittest import mock

import torch
from torch import nn

ROWS, FEATURES, CLASSES = 16, 8, 4


class NotRunnable(Exception):
    pass


class _Off:
    """Stands in for every autocast: a context manager and a decorator that do nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        return func


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 16)
        self.proj = nn.Linear(16, CLASSES)

    def forward(self, x):
        return self.proj(torch.tanh(self.fc1(x)))


class World:
    """Seeded values by name, the same for the program before and after the fix."""

    def __init__(self, seed: int = 0) -> None:
        torch.manual_seed(seed)
        self.model = _Net()
        g = torch.Generator().manual_seed(seed + 1)
        self.x = torch.randn(ROWS, FEATURES, generator=g)
        self.z = torch.randn(ROWS, CLASSES, generator=g)
        self.y = torch.rand(ROWS, CLASSES, generator=g)
        self.labels = (torch.rand(ROWS, CLASSES, generator=g) > 0.5).float()
        self.w = torch.rand(CLASSES, generator=g) + 0.5
        self.idx = torch.randperm(ROWS, generator=g)
        self.ids = torch.randint(0, ROWS, (ROWS,), generator=g)
        self.mask = torch.rand(ROWS, CLASSES, generator=g) > 0.5
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.leaves: Dict[str, torch.Tensor] = {}

    def _leaf(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        leaf = tensor.clone().requires_grad_(True)
        self.leaves[name] = leaf
        return leaf

    def value(self, name: str):
        low = name.lower()
        if low in ("model", "net", "module", "network", "encoder", "head") or low.endswith(("model", "net")):
            return self.model
        if low in ("x", "inputs", "input", "batch", "images", "features", "feats", "src"):
            return self._leaf(name, self.x)
        if low in ("z", "logits", "out", "output", "outputs", "scores", "pred", "preds", "h",
                   "hidden", "logit", "pred_logits"):
            return self._leaf(name, self.z)
        if low in ("p", "probs", "prob", "probas", "probabilities"):
            return self._leaf(name, torch.sigmoid(self.z))
        if low in ("y", "target", "targets", "gt", "soft_targets"):
            return self.y.clone()
        if low in ("labels", "label"):
            return self.labels.clone()
        if low in ("w", "weight", "weights", "pos_weight", "class_weight"):
            return self.w.clone()
        if low in ("idx", "index", "indices", "perm"):
            return self.idx.clone()
        if low in ("ids", "segment_ids", "batch_idx", "expert_ids"):
            return self.ids.clone()
        if low in ("mask", "keep"):
            return self.mask.clone()
        if low in ("n", "rows", "batch_size", "bsz"):
            return ROWS
        if low in ("optimizer", "opt", "optim"):
            return self.optimizer
        if low == "scaler":
            return torch.amp.GradScaler("cpu", enabled=False)  # patched or not: disabled
        if low in ("loader", "dataloader", "data", "train_loader"):
            return [(self.x.clone(), self.y.clone()), (self.x.flip(0), self.y.flip(0))]
        if low == "loss":
            return (self.model(self.x) ** 2).mean()
        if low == "device":
            return "cpu"
        if low == "dtype":
            return None  # the runnable fixtures' fp32 reference
        if low in ("use_amp", "amp", "enabled"):
            return True
        if low == "gamma":
            return 2.0
        if low in ("accum", "accumulation_steps", "step"):
            return 1
        raise NotRunnable(f"no value for {name!r}")


def _free_names(tree: ast.Module):
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(used - bound - set(dir(builtins)))


@contextlib.contextmanager
def fp32_cpu():
    identity = lambda self, *a, **k: self  # noqa: E731
    real_scaler = torch.amp.GradScaler
    scaler = lambda *a, **k: real_scaler("cpu", enabled=False)  # noqa: E731
    patches = [
        mock.patch.object(torch, "autocast", _Off),
        mock.patch.object(torch.amp, "autocast", _Off),
        mock.patch.object(torch.cuda.amp, "autocast", _Off),
        mock.patch.object(torch.cpu.amp, "autocast", _Off),
        mock.patch.object(torch.Tensor, "cuda", identity),
        mock.patch.object(torch.Tensor, "half", identity),
        mock.patch.object(nn.Module, "cuda", identity),
        mock.patch.object(nn.Module, "half", identity),
        mock.patch.object(torch.amp, "GradScaler", scaler),
        mock.patch.object(torch.cuda.amp, "GradScaler", scaler),
    ]
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")
        yield


def _tensors(prefix: str, value, out: Dict[str, torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            out[prefix] = value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            _tensors(f"{prefix}[{i}]", item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            _tensors(f"{prefix}[{key!r}]", item, out)


def run(source: str, seed: int = 0, float64: bool = False) -> Dict[str, torch.Tensor]:
    """Every floating tensor the program computes (values and gradients), by a stable name.
    `float64`: the same program and inputs in double precision (the accuracy reference)."""
    if float64:
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            return run(source, seed)
        finally:
            torch.set_default_dtype(previous)
    tree = ast.parse(source)
    world = World(seed)
    namespace: Dict[str, object] = {"__name__": "amplint_fp32_run"}
    with fp32_cpu():
        try:
            for name in _free_names(tree):
                namespace[name] = world.value(name)
            exec(compile(tree, "<program>", "exec"), namespace)
        except NotRunnable:
            raise
        except Exception as exc:
            raise NotRunnable(f"module: {type(exc).__name__}: {exc}") from exc
        found: Dict[str, torch.Tensor] = {}
        failed: Dict[str, str] = {}
        for name, value in list(namespace.items()):
            _tensors(f"global {name}", value, found)
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            func = namespace.get(node.name)
            if not callable(func):
                continue
            args = node.args
            defaults = len(args.defaults)
            params = args.posonlyargs + args.args
            try:
                kwargs = {
                    param.arg: world.value(param.arg) for i, param in enumerate(params)
                    if i < len(params) - defaults or param.arg in ("device", "dtype")
                }
            except NotRunnable:
                continue  # a function the harness cannot call: no evidence
            torch.manual_seed(seed + 2)
            try:
                result = func(**kwargs)
            except Exception as exc:
                failed[node.name] = f"{type(exc).__name__}: {exc}"
                continue
            found[f"{node.name}() ran"] = torch.ones(1)
            _tensors(f"{node.name}()", result, found)
        if not found and failed:
            raise NotRunnable("; ".join(f"{k}: {v}" for k, v in failed.items()))
        losses = [t for t in found.values() if t.requires_grad and t.grad_fn is not None]
        if losses:
            try:
                torch.stack([t.sum() for t in losses]).sum().backward(retain_graph=True)
            except RuntimeError as exc:
                if "second time" not in str(exc):  # else: the program ran its own backward
                    raise NotRunnable(f"backward: {exc}") from exc
        for name, leaf in world.leaves.items():
            if leaf.grad is not None:
                found[f"grad {name}"] = leaf.grad
        for name, param in world.model.named_parameters():
            found[f"param {name}"] = param.detach()
            if param.grad is not None:
                found[f"grad {name}"] = param.grad
    return {k: v.detach().clone() for k, v in found.items()}


def compare(before: Dict[str, torch.Tensor], after: Dict[str, torch.Tensor],
            rtol: float = 0.0, reference: Optional[Dict[str, torch.Tensor]] = None) -> Optional[str]:
    """None when every tensor the original computed is equal after the fix (exactly for
    rtol=0, else within `rtol` relative to the tensor's norm); else what differs. A name
    bound only before (a dead `p = sigmoid(z)` the fix removed) is not compared.

    `reference` (the original program run in float64): a tensor beyond `rtol` still passes
    when it is within 100 * rtol and closer to the float64 value than the original was (the
    fix computes it more accurately, never less)."""
    problems = []
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            if not name.startswith("global "):
                problems.append(f"{name}: gone after the fix")
            continue
        if old.shape != new.shape or old.dtype != new.dtype:
            problems.append(f"{name}: {old.shape}/{old.dtype} -> {new.shape}/{new.dtype}")
        elif rtol == 0.0:
            if not torch.equal(old, new):
                problems.append(f"{name}: max |diff| {(old - new).abs().max().item():.3g}")
        else:
            diff = relative_difference(old, new)
            truth = reference.get(name) if reference is not None else None
            if diff > rtol and truth is not None and truth.shape == old.shape and diff <= 100 * rtol:
                if relative_difference(truth, new) <= relative_difference(truth, old):
                    continue
            if diff > rtol:
                problems.append(f"{name}: relative difference {diff:.3g} > {rtol}")
    return "; ".join(problems) or None


def relative_difference(old: torch.Tensor, new: torch.Tensor) -> float:
    scale = old.double().norm().item()
    diff = (old.double() - new.double()).norm().item()
    return diff if scale == 0 else diff / scale
