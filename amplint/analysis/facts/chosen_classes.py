"""Which class a call of this file constructs when a string picks the class (issue 26), for every
rule that asks "which class is this instance": AMP102 (a `BCELoss` held as the loss), the
GradScaler facts (scalers.py: which call makes a scaler).

pytorchvideo's losses module is the shape:

    LOSSES = {"cross_entropy": nn.CrossEntropyLoss, "bce": nn.BCELoss}
    def build_loss(name, **kwargs):
        return LOSSES[name](**kwargs)
    ...
    self.loss_fn = build_loss("bce", reduction="mean")

The forms read, each exact or nothing:
- `D[key](...)`: `D` bound once, at module level, to a dict display (or `dict(k=...)`) whose keys
  are all string literals and whose values are all dotted names; every other mention of `D` in
  the file is a read `D[...]` (no store into it, no `D.update`, no alias, no `global D`); the key
  a string literal, or a local the function binds once to one;
- `getattr(M, "Name")(...)`: `M` an imported module, the name a literal;
- `build(key, ...)`: `build` a module-level function of the file (or one another file defines,
  imported by that name: the project pass's `EntryReturn` of kind "chosen",
  project/chosen_builders.py) whose every `return` is
  `return D[p](...)` (the instance) or `return D[p]` (the class, then called), `p` one of its
  parameters bound nowhere else; the key is what the call passes for `p` (positionally or by
  keyword), or the parameter's literal default when the call leaves it out. A call with
  `*args` / `**kwargs` that may fill `p` gives nothing.
- dict values that are tuples (EfficientViT's `REGISTERED = {"b0": (lite_mla_b0, "cityscapes")}`),
  read by a builder whose one binding `model_cls, dataset = D[p]` it then calls
  (`return model_cls(...)`): the tuple's item at that position;
- a value that is a module-level factory of the file returning a new `Cls(...)` of the file on
  every path (the call graph's factory reading): `Cls`, for `local_class` (fp16.py's half
  classes); the classes of this file are kept as "@Cls" and `constructed` never gives them;
- `helper(...)` / `self.helper(...)` where the helper returns a new instance of one imported class
  on every path (builder_returns.py): that class, not direct, `built` holding what the call
  returns (AMP152 maps the helper's parameters to the call's arguments).
A key the dict does not hold, a value that does not resolve, anything else: no class.
`direct` tells whether the call's own arguments are the class's (a rewrite of the constructor
may keep them): true for the first two forms, false through a builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.analysis.facts.builder_returns import returned_instance
from amplint.analysis.facts.names import _CANONICAL, resolve, visible_scopes
from amplint.analysis.facts.syntax import iter_nodes, params
from amplint.analysis.facts.tree import Collector, Frame, dotted_name


@dataclass(frozen=True)
class Chosen:
    qualified: str  # "torch.nn.BCELoss"
    how: str  # `LOSSES["bce"]`, for messages
    direct: bool  # the call's arguments are the constructor's own
    # a helper returning the instance (`return AdamW(model.parameters())`): what the call returns,
    # its constructors read in the helper's frame (facts/function_returns.py Returned)
    built: Optional[object] = None


class ChosenClasses:
    def __init__(self, tree: Collector, entries=(), returns=None) -> None:
        self.tree = tree
        self.returns = returns  # facts/function_returns.py, for helpers returning an instance
        # imported builders of other files (project/chosen_builders.py), by the imported name
        self.remote = {e.call: e for e in entries if getattr(e, "kind", "") in ("chosen", "chosen_class")
                       and e.ordinal == -1}
        self._dicts: Optional[Dict[str, Dict[str, str]]] = None
        self._builders: Dict[str, Optional[Tuple[str, str, bool, Optional[str]]]] = {}

    def constructed(self, call: cst.BaseExpression, frame: Frame, helpers: bool = True) -> Optional[Chosen]:
        """The class `call` makes an instance of, when a string picks it or a helper returns it
        (None otherwise, and for a plain `Cls(...)`, which `names.resolve` answers). `helpers`:
        False for a reader that takes only the class's own arguments (`direct`)."""
        found = self._picked(call, frame, helpers)
        return found if found is not None and not found.qualified.startswith("@") else None

    def local_class(self, call: cst.BaseExpression, frame: Frame) -> Optional[str]:
        """The class of THIS file `call` makes an instance of when a string picks it
        (`create_model("b0")` through `REGISTERED = {"b0": (lite_mla_b0, "cityscapes")}`, a
        factory of the file returning `LiteMLA(...)`), for the class facts (fp16.py)."""
        found = self._picked(call, frame)
        return found.qualified[1:] if found is not None and found.qualified.startswith("@") else None

    def _picked(self, call: cst.BaseExpression, frame: Frame, helpers: bool = False) -> Optional[Chosen]:
        if not isinstance(call, cst.Call):
            return None
        func = call.func
        picked = self.named(func, frame)
        if picked is not None:
            return Chosen(picked[0], picked[1], True)
        if isinstance(func, cst.Call):  # `build_cls("bce")(...)`: a builder returning the class
            built = self._built(func, frame, want_class=True)
            return Chosen(built[0], built[1], True) if built is not None else None
        built = self._built(call, frame, want_class=False)
        if built is not None:
            return Chosen(built[0], built[1], False)
        helper = returned_instance(self.tree, self.returns, call, frame) if helpers else None
        if helper is None:
            return None
        return Chosen(helper[0], f"{helper[1].function.name}()", False, helper[1])

    def named(self, expr: cst.BaseExpression, frame: Frame) -> Optional[Tuple[str, str]]:
        """(qualified class, how) for `D["key"]` / `getattr(module, "Name")`."""
        if isinstance(expr, cst.Subscript):
            name, key = self._subscript(expr)
            if name is None or not isinstance(key, cst.BaseExpression):
                return None
            literal = self._literal(key, frame)
            if literal is None:
                return None
            return self._lookup(name, literal, frame)
        if isinstance(expr, cst.Call) and dotted_name(expr.func) == ("getattr",) and len(expr.args) == 2 \
                and not any(a.star or a.keyword for a in expr.args) and "getattr" not in _bound(frame):
            module = resolve(dotted_name(expr.args[0].value), frame)
            attr = _string(expr.args[1].value)
            if module is None or attr is None or not attr.isidentifier():
                return None
            return f"{module}.{attr}", f"getattr({module}, {attr!r})"
        return None

    # -- the dicts ---------------------------------------------------------------------------
    def _lookup(self, name: str, key: str, frame: Frame, index: Optional[int] = None) -> Optional[Tuple[str, str]]:
        """(the value, how) of `D[key]`, or of its item `index` where the values are tuples
        (`builder, _ = D[key]`); a class of this file as "@Name"."""
        for scope in visible_scopes(frame):
            if scope.kind == "module":
                break
            if name in scope.bindings or name in scope.imports:
                return None  # a local of that name, not the module's dict
        values = self.dicts().get(name)
        value = values.get(key) if values is not None else None
        if isinstance(value, tuple):
            value = value[index] if index is not None and index < len(value) else None
        elif index is not None:
            value = None
        if not value or value == "?":
            return None
        return value, f"{name}[{key!r}]" if index is None else f"{name}[{key!r}][{index}]"

    def dicts(self) -> Dict[str, Dict[str, str]]:
        """Module-level name -> {key: qualified class} of the exact name->class dicts."""
        if self._dicts is not None:
            return self._dicts
        self._dicts = {}
        module = self.tree.module_frame
        shapes: Dict[str, Dict[str, str]] = {}
        binding: Dict[str, cst.CSTNode] = {}
        for assign in self.tree.assigns:
            if assign.frame is not module or len(assign.targets) != 1:
                continue
            target = assign.targets[0]
            if not isinstance(target, cst.Name) or not self.tree.bound_once(module, target.value):
                continue
            values = _display(assign.value, module, self.tree.classes, self._factory)
            if values:
                shapes[target.value] = values
                binding[target.value] = target
        if not shapes:
            return self._dicts
        spoiled = set()
        reads: Dict[int, str] = {}
        for node in iter_nodes(module.node):
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in shapes:
                reads[id(node.value)] = node.value.value
            elif isinstance(node, cst.ComparisonTarget) and isinstance(node.operator, (cst.In, cst.NotIn)) \
                    and isinstance(node.comparator, cst.Name):
                reads[id(node.comparator)] = node.comparator.value  # `name in D`
            elif isinstance(node, cst.Call) and dotted_name(node.func) in _READERS and len(node.args) == 1 \
                    and isinstance(node.args[0].value, cst.Name) and not node.args[0].star and not node.args[0].keyword:
                reads[id(node.args[0].value)] = node.args[0].value.value  # `sorted(D)`
            elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for part in iter_nodes(target):
                        if isinstance(part, cst.Subscript) and isinstance(part.value, cst.Name):
                            spoiled.add(part.value.value)  # `D[k] = cls`, `del D[k]`
        for node in iter_nodes(module.node):
            if isinstance(node, cst.Name) and node.value in shapes and id(node) not in reads \
                    and node is not binding[node.value]:
                spoiled.add(node.value)  # `D.update(...)`, `other = D`, `f(D)`
        self._dicts = {name: values for name, values in shapes.items() if name not in spoiled}
        return self._dicts

    @staticmethod
    def _subscript(expr: cst.Subscript):
        if not isinstance(expr.value, cst.Name) or len(expr.slice) != 1:
            return None, None
        index = expr.slice[0].slice
        return expr.value.value, index.value if isinstance(index, cst.Index) else None

    def _literal(self, expr: cst.BaseExpression, frame: Frame) -> Optional[str]:
        found = _string(expr)
        if found is not None or not isinstance(expr, cst.Name):
            return found
        scope = frame.scope
        if scope.kind != "function" or not self.tree.bound_once(scope, expr.value):
            return None
        for assign in self.tree.assigns:
            if assign.frame.scope is scope and len(assign.targets) == 1 \
                    and isinstance(assign.targets[0], cst.Name) and assign.targets[0].value == expr.value:
                return _string(assign.value)
        return None

    def _factory(self, name: str) -> Optional[str]:
        """The class of this file a module-level function returns a new instance of on every
        path (the call graph's factory reading), when the function is bound once."""
        if self.returns is None or not self.tree.bound_once(self.tree.module_frame, name):
            return None
        return self.returns.callgraph.factory_class(cst.Call(func=cst.Name(name)))

    # -- builders ------------------------------------------------------------------------------
    def _built(self, call: cst.Call, frame: Frame, want_class: bool) -> Optional[Tuple[str, str]]:
        name = dotted_name(call.func)
        if name is None or len(name) != 1:
            return None
        if name[0] in self.remote:
            return self._remote(call, frame, self.remote[name[0]], want_class)
        shape = self._builder(name[0])
        if shape is None or name[0] in _bound(frame, below_module=True):
            return None
        dict_name, param, returns_class, default, index = shape
        if returns_class != want_class:
            return None
        key = _argument(call, self.tree.module_frame.functions[name[0]].node, param, default)
        if key is None:
            return None
        found = self._lookup(dict_name, key, self.tree.module_frame, index)
        if found is None:
            return None
        return found[0], f"{name[0]}({key!r}) -> {found[1]}"

    def _remote(self, call: cst.Call, frame: Frame, entry, want_class: bool) -> Optional[Tuple[str, str]]:
        """`build_loss("bce")` with `build_loss` imported from the file the entry names."""
        name = call.func.value  # type: ignore[attr-defined]
        if (entry.kind == "chosen_class") != want_class or name not in self.tree.module_frame.imports \
                and name not in self.tree.module_frame.relative or name in _bound(frame, below_module=True):
            return None
        if name in self.tree.module_frame.bindings:
            return None  # the module rebinds the imported name
        key = _argument_at(call, entry.index, entry.param, entry.key_default)
        qualified = dict(entry.choices).get(key) if key is not None else None
        if qualified is None or qualified.startswith("@"):
            return None
        return _CANONICAL.get(qualified, qualified), f"{entry.callee}({key!r})"

    def _builder(self, name: str):
        if name in self._builders:
            return self._builders[name]
        self._builders[name] = None
        function = self.tree.module_frame.functions.get(name)
        if function is None or not isinstance(function.node, cst.FunctionDef) or function.node.decorators \
                or not self.tree.bound_once(self.tree.module_frame, name) or not self.dicts():
            return None
        shapes = set()
        for node in iter_nodes(function.node.body):
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None  # a nested scope's return is not this function's
            if isinstance(node, (cst.Yield, cst.Await)):
                return None
            if isinstance(node, cst.Return):
                shapes.add(_return_shape(node.value, self, function))
        named = {p.name.value: p for p in params(function.node)}
        if len(shapes) != 1 or None in shapes:
            return None
        dict_name, param, returns_class, index = shapes.pop()
        if param not in named or not self.tree.bound_once(function, param) or dict_name in function.bindings:
            return None
        default = named[param].default
        literal = _string(default) if default is not None else None
        if default is not None and literal is None:
            return None
        self._builders[name] = (dict_name, param, returns_class, literal, index)
        return self._builders[name]


def _return_shape(value, chosen: ChosenClasses, function: Frame):
    """(dict, parameter, returns the class, tuple item) for `return D[p](...)` / `return D[p]`,
    or `return cls(...)` after the function's one binding `cls, dataset = D[p]` (item 0)."""
    returns_class = not isinstance(value, cst.Call)
    subscript = value if returns_class else value.func
    index = None
    if isinstance(subscript, cst.Name) and not returns_class:
        subscript, index = _unpacked(subscript.value, chosen.tree, function)
    if not isinstance(subscript, cst.Subscript):
        return None
    name, key = chosen._subscript(subscript)
    if name is None or not isinstance(key, cst.Name) or name not in chosen.dicts():
        return None
    return name, key.value, returns_class, index


def _unpacked(name: str, tree: Collector, function: Frame):
    """(`D[p]`, the item) when `name`'s one binding in `function` is `name, ... = D[p]`."""
    if not tree.bound_once(function, name):
        return None, None
    for assign in tree.assigns:
        if assign.frame.scope is not function or len(assign.targets) != 1:
            continue
        target = assign.targets[0]
        if not isinstance(target, (cst.Tuple, cst.List)):
            continue
        names = [e.value.value if isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement) else None
                 for e in target.elements]
        if name in names and isinstance(assign.value, cst.Subscript):
            return assign.value, names.index(name)
    return None, None


def _argument(call: cst.Call, function: cst.FunctionDef, param: str, default: Optional[str]) -> Optional[str]:
    names = [p.name.value for p in list(function.params.posonly_params) + list(function.params.params)]
    return _argument_at(call, names.index(param) if param in names else None, param, default)


def _argument_at(call: cst.Call, position: Optional[int], param: str, default: Optional[str]) -> Optional[str]:
    """The literal the call gives parameter `param` (at `position`, None or -1: keyword-only;
    its default when left out); None when it is not a literal or a starred argument may fill it."""
    if position == -1:
        position = None
    positional, starred = 0, False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == param:
                return _string(arg.value)
        elif arg.star:
            starred = True
        else:
            if positional == position:
                return None if starred else _string(arg.value)
            positional += 1
    return None if starred else default


def _display(value: cst.BaseExpression, module: Frame, classes, factory) -> Optional[Dict[str, object]]:
    pairs = []
    if isinstance(value, cst.Dict):
        for element in value.elements:
            if not isinstance(element, cst.DictElement):
                return None
            pairs.append((_string(element.key), element.value))
    elif isinstance(value, cst.Call) and dotted_name(value.func) == ("dict",) and "dict" not in module.bindings \
            and value.args:
        for arg in value.args:
            if arg.keyword is None or arg.star:
                return None
            pairs.append((arg.keyword.value, arg.value))
    else:
        return None
    out: Dict[str, object] = {}
    for key, item in pairs:
        if key is None or key in out:
            return None
        if isinstance(item, cst.Tuple):  # `"b0": (lite_mla_b0, "cityscapes")`
            parts = tuple(_value(e.value, module, classes, factory) if not isinstance(e, cst.StarredElement)
                          else None for e in item.elements)
            if None in parts:
                return None
            out[key] = parts
            continue
        qualified = _value(item, module, classes, factory)
        if qualified is None or qualified == "":
            return None
        out[key] = qualified
    return out


def _value(item: cst.BaseExpression, module: Frame, classes, factory) -> Optional[str]:
    """What a dict value names: the qualified import, "@Cls" for a class of this file or a
    factory of this file returning a new `Cls(...)` ("?" for another function of the file),
    "" for a literal in a tuple; None for anything else."""
    qualified = resolve(dotted_name(item), module)
    if qualified is not None:
        return qualified
    if isinstance(item, cst.Name) and item.value in classes and classes[item.value].parent is module:
        return "@" + item.value  # a class of this file: no rule's class, but the dict stays exact
    if isinstance(item, cst.Name) and item.value in module.functions:
        built = factory(item.value)
        return "@" + built if built is not None else "?"
    if isinstance(item, (cst.SimpleString, cst.Integer, cst.Float)) or \
            isinstance(item, cst.Name) and item.value in ("None", "True", "False"):
        return ""
    return None


_READERS = frozenset({("sorted",), ("len",), ("list",), ("tuple",), ("set",)})


def _string(expr) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _bound(frame: Frame, below_module: bool = False) -> set:
    """The names the scopes between `frame` and the module bind (the module's too unless
    `below_module`)."""
    out = set()
    for scope in visible_scopes(frame):
        if below_module and scope.kind == "module":
            break
        out |= scope.bindings | set(scope.imports)
    return out
