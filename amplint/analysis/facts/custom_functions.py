"""Custom autograd Functions of a file that care about dtypes (AMP151), and the same fact for a
Function another file defines, as the project pass delivers it (`EntryFunction`).

A `torch.autograd.Function` subclass with a static `forward` is *dtype-sensitive* when its
forward/backward run an op autocast casts (`mm`, `@`, `conv*`, ...) or call a compiled extension,
and do not cast tensors themselves; it is *undecorated* when `forward` lacks `custom_fwd` or
`backward` lacks `custom_bwd`. amplint.analysis.project.function_entries finds the `.apply` of
such a class (or of a module-level `fn = Cls.apply`) that another file imports, and hands that
file an `EntryFunction` under the name it imports.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Set, Tuple

import libcst as cst

from amplint.analysis.facts.kernel_sources import folders_up
from amplint.analysis.facts.names import resolve_expr
from amplint.analysis.facts.tree import Frame, dotted_name

FUNCTION_BASES = ("torch.autograd.Function", "torch.autograd.function.Function",
                  "torch.autograd.function.InplaceFunction")
# Ops the autocast op reference lists as casting (lower precision or float32), plus the
# `@` operator: a Function wrapping one saves tensors whose dtype backward must match.
AUTOCAST_OPS = {
    "mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "addmv", "addr", "mv", "dot", "linear",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "conv_tbc", "einsum", "chain_matmul", "prelu", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "scaled_dot_product_attention", "_scaled_dot_product_attention",
}
# Compiled extensions: `import my_ext_cuda`, `from . import _C`, `torch.ops.x.y`.
_EXTENSION = re.compile(r"(^|[._])(_C|ext|cuda|cpp|kernels?)($|[._])|_ext|_cuda|_cpp")
_LOADERS = ("load_ext", "load", "load_inline")  # mmcv ext_loader.load_ext, cpp_extension.load


@dataclass
class FunctionClass:
    frame: Frame
    forward: Frame
    backward: Optional[Frame]
    has_fwd: bool
    has_bwd: bool
    reason: str  # what makes it dtype-sensitive
    extension_only: bool  # no op autocast casts: float32 inputs keep it in float32


@dataclass(frozen=True)
class EntryFunction:
    """A dtype-sensitive, undecorated Function of another file that this file imports.
    `target`: the name this file binds at module level; `alias`: that name is `Cls.apply`
    itself (called directly), else the class (`target.apply(...)`)."""

    target: str
    alias: bool
    cls: str  # the class's name in its own file
    where: str  # "ops/functions/ms_deform_attn_func.py:6", for messages
    has_fwd: bool
    has_bwd: bool  # True also when there is no backward
    reason: str
    extension_only: bool


def function_classes(facts, python_module: Optional[Callable[[str], bool]] = None,
                     half_kernel: Optional[Callable[[str], bool]] = None) -> Dict[str, FunctionClass]:
    """The file's dtype-sensitive Function classes that lack `custom_fwd` or `custom_bwd`.
    `python_module(M)`: whether a plain `import M` names Python source (a file of the project,
    or one beside the file): such a module is never taken for a compiled kernel binding.
    `half_kernel(M)`: whether the project's own source of extension `M` runs half, one tensor
    at a time (facts/kernel_sources): a Function calling only such kernels, with no op autocast
    casts and a backward given nothing saved, is not dtype-sensitive."""
    found: Dict[str, FunctionClass] = {}
    extensions = None
    for name, frame in facts.tree.classes.items():
        node = frame.node
        assert isinstance(node, cst.ClassDef)
        outer = frame.parent
        assert outer is not None
        if not any(resolve_expr(base.value, outer) in FUNCTION_BASES for base in node.bases):
            continue
        forward, backward = _static(facts, frame, "forward"), _static(facts, frame, "backward")
        if forward is None or backward is None and "backward" in frame.bindings:
            continue  # no static forward, or a backward bound some way not read
        has_fwd = _decorated(forward, frame, "custom_fwd")
        has_bwd = backward is None or _decorated(backward, frame, "custom_bwd")
        if has_fwd and has_bwd:
            continue
        if extensions is None:
            extensions = _extension_names(facts)
            imported = _plain_imports(facts, python_module)
        reason, autocast_op, kernels = _dtype_sensitive(
            (forward, backward), extensions | _binding_pairs(forward, backward, imported))
        if reason is None or not autocast_op and half_kernel is not None and kernels and all(
                map(half_kernel, kernels)) and not _saves_tensors(forward, backward):
            continue
        found[name] = FunctionClass(frame, forward, backward, has_fwd, has_bwd, reason,
                                    not autocast_op)
    return found


def apply_aliases(facts, classes) -> Dict[str, str]:
    """Module-level `fn = Cls.apply` of the file -> class name (what another file imports)."""
    found: Dict[str, str] = {}
    module = facts.tree.module_frame
    for site in facts.tree.assigns:
        value = site.value
        if site.frame is not module or not (
            isinstance(value, cst.Attribute) and value.attr.value == "apply"
            and isinstance(value.value, cst.Name) and value.value.value in classes
        ):
            continue
        for target in site.targets:
            if isinstance(target, cst.Name):
                found[target.value] = value.value.value
    return found


def _static(facts, cls: Frame, name: str) -> Optional[Frame]:
    """The function that runs as the Function's static method `name`: `@staticmethod def
    forward`, or safari's `forward = staticmethod(_gate_proj_forward)` in the class body, the
    function a module-level def of the file, each name bound once."""
    method = cls.functions.get(name)
    if method is not None:
        return method if name == "backward" or _is_static(method) else None  # as before: any `def backward`
    module = facts.tree.module_frame
    if not facts.tree.bound_once(cls, name) or "staticmethod" in module.bindings or "staticmethod" in module.imports:
        return None
    for site in facts.tree.assigns:
        if site.frame is not cls or len(site.targets) != 1 or not isinstance(site.targets[0], cst.Name) \
                or site.targets[0].value != name:
            continue
        value = site.value
        if not (isinstance(value, cst.Call) and dotted_name(value.func) == ("staticmethod",)
                and len(value.args) == 1 and not value.args[0].star and not value.args[0].keyword
                and isinstance(value.args[0].value, cst.Name)):
            return None
        wrapped = value.args[0].value.value
        function = module.functions.get(wrapped)
        if function is None or not facts.tree.bound_once(module, wrapped):
            return None
        return function
    return None


def _is_static(frame: Frame) -> bool:
    node = frame.node
    assert isinstance(node, cst.FunctionDef)
    return any(
        isinstance(dec.decorator, cst.Name) and dec.decorator.value == "staticmethod"
        for dec in node.decorators
    )


def _decorated(method: Frame, cls: Frame, name: str) -> bool:
    """`@custom_fwd`, `@custom_fwd(...)`, `@torch.amp.custom_fwd(...)`, `@amp.custom_fwd`."""
    node = method.node
    assert isinstance(node, cst.FunctionDef)
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        dotted = dotted_name(expr)
        if dotted and dotted[-1] == name:
            return True
        # functools.partial(torch.amp.custom_fwd, device_type="cuda") bound to a name
        if isinstance(expr, cst.Name) and name in expr.value:
            return True
    return False


class _Sensitive(cst.CSTVisitor):
    def __init__(self, extensions: Set[str]) -> None:
        self.extensions = extensions
        self.reason: Optional[str] = None
        self.casts = False  # the author matches dtypes by hand (`.float()`, `.to(g.dtype)`)
        self.autocast_op = False
        self.kernels: Set[str] = set()  # the extensions called; "" for `torch.ops.x`

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.MatrixMultiply):
            self.autocast_op = True
            if self.reason is None:
                self.reason = "wraps a matmul (`@`)"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and _is_cast(node):
            self.casts = True
        dotted = dotted_name(node.func)
        if not dotted:
            return
        if dotted[-1] in AUTOCAST_OPS:
            self.autocast_op = True
        extension = len(dotted) > 1 and (
            dotted[0] in self.extensions
            or (dotted[:2] == ("torch", "ops") and len(dotted) > 2 and dotted[2] != "aten")
        )
        if extension:
            self.kernels.add(dotted[0] if dotted[0] in self.extensions else "")
        if self.reason is not None:
            return
        if dotted[-1] in AUTOCAST_OPS:
            self.reason = f"wraps `{dotted[-1]}`, an op autocast casts"
        elif extension:
            self.reason = f"calls the compiled extension `{'.'.join(dotted[:-1])}`"


def _is_cast(call: cst.Call) -> bool:
    func = call.func
    assert isinstance(func, cst.Attribute)
    method = func.attr.value
    if method in ("float", "half", "bfloat16", "double", "type_as"):
        return True
    if method in ("to", "type"):
        text = cst.Module([]).code_for_node(call)
        return "dtype" in text or "float" in text or "half" in text
    return False


def _dtype_sensitive(methods, extensions: Set[str]) -> Tuple[Optional[str], bool, Set[str]]:
    """Why the Function cares about dtypes, or None: no casting op or extension call, or its
    forward/backward cast tensors themselves; whether it runs an op autocast casts; and the
    extensions it calls."""
    reason, autocast_op, kernels = None, False, set()
    for method in methods:
        if method is None:
            continue
        visitor = _Sensitive(extensions)
        method.node.visit(visitor)
        if visitor.casts:
            return None, False, set()
        reason = reason or visitor.reason
        autocast_op = autocast_op or visitor.autocast_op
        kernels |= visitor.kernels
    return reason, autocast_op, kernels


_SAVED = frozenset({"save_for_backward", "saved_tensors", "saved_variables", "mark_dirty", "setattr",
                    "mark_non_differentiable"})


def _saves_tensors(forward: Frame, backward: Optional[Frame]) -> bool:
    """Whether backward may be given a tensor of forward's other than the gradient: a saved
    tensor, or a `ctx` attribute forward sets from anything but its non-first parameters
    (Swin's `ctx.B = B` keeps shapes; `ctx.x = x` or `ctx.w = self_computed` keeps a tensor)."""
    if any(method is not None and _names_in(method.node) & _SAVED for method in (forward, backward)):
        return True  # names, not text: Swin's `#grad_out = ctx.saved_tensors[0]` is a comment
    node = forward.node
    assert isinstance(node, cst.FunctionDef)
    names = [param.name.value for param in node.params.params]
    context = names[0] if names else "ctx"
    metadata = set(names[2:]) | {"True", "False", "None"}  # after ctx and the tensor it runs on
    other: Set[str] = set()

    class _Kept(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if any(context in _names_in(target.target) for target in assign.targets):
                other.update(_names_in(assign.value) - metadata)

        def visit_AugAssign(self, assign: cst.AugAssign) -> None:
            if context in _names_in(assign.target):
                other.update(_names_in(assign.value) - metadata)

    node.visit(_Kept())
    return bool(other)


def _names_in(value: cst.CSTNode) -> Set[str]:
    found: Set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    value.visit(_Names())
    return found


# plain `import M` of modules that are Python, not kernel bindings
_PYTHON_MODULES = frozenset({"torch", "numpy", "np", "math", "functools", "itertools", "os", "sys",
                             "warnings", "logging", "typing", "collections", "copy", "operator"})


def _plain_imports(facts, python_module: Optional[Callable[[str], bool]] = None) -> Set[str]:
    """Names bound at module level by a plain `import M` / `import M as N` (no package path:
    `import a.b` binds a package), M not a Python library listed above nor Python source."""
    names: Set[str] = set()
    for stmt in facts.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                if not isinstance(alias.name, cst.Name) or alias.name.value in _PYTHON_MODULES:
                    continue
                if python_module is not None and python_module(alias.name.value):
                    continue
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name):
                    names.add(bound.value)
    return names


def python_source_near(path: str) -> Callable[[str], bool]:
    """`python_module` for a file on disk: `M.py` or `M/__init__.py` in the file's folder or
    one of its parents (where `import M` finds it when the script or the project root runs)."""
    start = os.path.dirname(os.path.abspath(path))

    def test(name: str) -> bool:
        return any(os.path.isfile(os.path.join(folder, name + ".py"))
                   or os.path.isfile(os.path.join(folder, name, "__init__.py"))
                   for folder in folders_up(start))

    return test


def _binding_pairs(forward: Frame, backward: Optional[Frame], imported: Set[str]) -> Set[str]:
    """The imported modules whose `*forward*` function the Function's forward calls and whose
    `*backward*` function its backward calls: a kernel binding whatever its name
    (Deformable-DETR's `import MultiScaleDeformableAttention as MSDA`,
    `MSDA.ms_deform_attn_forward` / `MSDA.ms_deform_attn_backward`)."""
    if backward is None or not imported:
        return set()
    found = _module_calls(forward, imported, "forward")
    return found & _module_calls(backward, imported, "backward") if found else set()


def _module_calls(method: Frame, imported: Set[str], word: str) -> Set[str]:
    found: Set[str] = set()

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            dotted = dotted_name(node.func)
            if dotted and len(dotted) == 2 and dotted[0] in imported and word in dotted[1]:
                found.add(dotted[0])

    method.node.visit(_Calls())
    return found


def _extension_names(facts) -> Set[str]:
    """Names bound to compiled extensions: `import foo_cuda`, `from . import _C`,
    `from .ops import deform_conv_ext as ext`."""
    names: Set[str] = set()
    module = facts.module
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                loader = dotted_name(small.value.func)
                if loader and loader[-1] in _LOADERS and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        names.add(target.value)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    full = ".".join(dotted_name(alias.name) or ())
                    bound = (
                        alias.asname.name.value
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                        else full.split(".")[0]
                    )
                    if _EXTENSION.search(full) and not full.startswith("torch"):
                        names.add(bound)
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = ".".join(dotted_name(small.module) or ()) if small.module else ""
                if base.startswith("torch"):
                    continue
                for alias in small.names:
                    if not isinstance(alias.name, cst.Name):
                        continue
                    bound = (
                        alias.asname.name.value
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                        else alias.name.value
                    )
                    if _EXTENSION.search(alias.name.value) or _EXTENSION.search(bound):
                        names.add(bound)
    return names
