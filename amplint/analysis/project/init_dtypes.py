"""A dtype a class keeps from its constructor (issue 26, "what an attribute holds"): nanoGPT-style
trainers take the autocast dtype as a parameter, `Trainer.__init__(self, ..., ptdtype=
torch.float16)` stores `self.ptdtype = ptdtype`, and `train` opens
`torch.autocast("cuda", dtype=self.ptdtype)`; the script builds `Trainer(model, opt,
ptdtype=torch.bfloat16)`. `self.ptdtype` is then what every construction passes (or the default
where one leaves it out), read by class_dtype_entries.py as the class's dtype for the attribute.

Exact or nothing, judged on the whole project:
- the class: undecorated, at module level, only `nn.Module`/`object` as bases, no project
  subclass, no classmethod or `type(self)` (another way to build it), its name written in no
  string of any file (a registry or `getattr` may build it);
- the store: `self.<attr> = <param>` is the only store of `.<attr>` in the project (any receiver,
  augmented, annotated; no `setattr` in the class's file), a statement of `__init__`'s own body,
  and `__init__` never rebinds the parameter;
- the constructions: every mention of the class's name in the project (the files whose text
  names it) is the callee of a call (`Trainer(...)`, `trainer.Trainer(...)`) or a plain import
  of it (not `as` another name); at least one; none passes `*`/`**`; no such file stores an
  attribute by a name it computes (`setattr(trainer, key, value)` of a config-override loop, a
  write through `__dict__`); each passes, or leaves to
  the default, a literal floating `torch.<dtype>` (through `import torch as th` too), and all
  give the same one."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from amplint.analysis.data import dtype_rules as R

_FLOATS = {name.split(".", 1)[1]: dtype for name, dtype in R.DTYPE_NAMES.items() if dtype in R.FLOAT_ORDER}
_PLAIN = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "object"})


def init_param_dtype(project, path: str, node: ast.ClassDef, bases, attr: str, parsed,
                     deciding: Set[str]) -> Optional[Tuple[str, str]]:
    """(what to cite, the dtype) for `self.<attr>` in class `node` of `path` (`bases`: the
    summary's references of its bases), or None."""
    cls = node.name
    if node.decorator_list or any(b not in _PLAIN for b in bases):
        return None
    if list(project.dispatch.subclasses(path, cls)):
        return None
    init = _only_init(node)
    if init is None:
        return None
    param = _stored_param(node, init, attr)
    if param is None:
        return None
    position, default = param
    files = _store_files(project, attr)
    if files != [path] or _stores(parsed_tree(project, path, parsed), attr) != 1:
        return None
    word = re.compile(r"\b%s\b" % re.escape(cls))
    quoted = (f'"{cls}"', f"'{cls}'")
    found: Optional[str] = None
    sites: List[str] = []
    for where in sorted(project.files):
        text = project.files.get(where) or ""
        if not where.endswith(".py") or cls not in text or word.search(text) is None:
            continue
        if any(q in text for q in quoted):
            return None
        module = parsed_tree(project, where, parsed)
        if module is None:
            return None
        deciding.add(where)
        calls = _constructions(module, cls)
        if calls is None or _stores_by_name(module):
            return None
        torch_names = _torch_aliases(module)
        for call in calls:
            value = _argument(call, attr_param=position, default=default)
            # a default is written in the class's file
            names = torch_names if value is not default else _torch_aliases(parsed_tree(project, path, parsed))
            dtype = _dtype(value, names)
            if dtype is None or found not in (None, dtype):
                return None
            found = dtype
            sites.append(f"{project.display(where)}:{call.lineno}")
    if found is None:
        return None
    return f"{cls} built at {', '.join(sites[:3])}", found


def parsed_tree(project, path: str, parsed) -> Optional[ast.Module]:
    if path not in parsed:
        try:
            parsed[path] = ast.parse(project.files.get(path) or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            parsed[path] = None
    return parsed[path]


def _only_init(node: ast.ClassDef) -> Optional[ast.FunctionDef]:
    inits = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in stmt.decorator_list:
                if isinstance(dec, ast.Name) and dec.id in ("classmethod", "staticmethod"):
                    return None
            if stmt.name == "__init__":
                inits.append(stmt)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "type":
            return None  # `type(self)(...)`
    return inits[0] if len(inits) == 1 and isinstance(inits[0], ast.FunctionDef) else None


def _stored_param(node: ast.ClassDef, init: ast.FunctionDef, attr: str):
    """(the parameter's position after self, or None for keyword-only; name; its default or
    None) when `__init__`'s body stores `self.<attr> = <param>` as a plain statement and
    never rebinds the parameter."""
    name = None
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name):
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and target.attr == attr \
                    and isinstance(target.value, ast.Name) and target.value.id == "self":
                name = stmt.value.id
    if name is None:
        return None
    for sub in ast.walk(init):
        if isinstance(sub, ast.Name) and sub.id == name and not isinstance(sub.ctx, ast.Load):
            return None
        if isinstance(sub, (ast.Global, ast.Nonlocal)) and name in sub.names:
            return None
    args = init.args
    positional = args.posonlyargs + args.args
    if not positional or positional[0].arg != "self" or args.vararg is not None:
        return None
    defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for index, arg in enumerate(positional[1:], start=1):
        if arg.arg == name:
            return (index - 1, name), defaults[index]
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if arg.arg == name:
            return (None, name), default
    return None


def _store_files(project, attr: str) -> List[str]:
    store = re.compile(r"\.%s\s*(?::[^=\n]*)?(?:[-+*/%%@&|^]|//|\*\*|<<|>>)?=(?!=)"
                       r"|\bsetattr\s*\([^,()]+,\s*[\"']%s[\"']" % (re.escape(attr), re.escape(attr)))
    return [path for path, text in sorted(project.files.items())
            if path.endswith(".py") and attr in (text or "") and store.search(text)]


def _stores(module: Optional[ast.Module], attr: str) -> int:
    """The stores of `.<attr>` in the module (a `setattr` call counts as two)."""
    if module is None:
        return 2
    count = 0
    for sub in ast.walk(module):
        if isinstance(sub, ast.Attribute) and sub.attr == attr and not isinstance(sub.ctx, ast.Load):
            count += 1
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Attribute) and sub.target.attr == attr:
            count += 1
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr":
            count += 2
    return count


def _constructions(module: ast.Module, cls: str) -> Optional[List[ast.Call]]:
    """The calls of `cls` in the module, when every mention of the name is one (or a plain
    import of it); None when it is mentioned otherwise."""
    callees: Dict[int, ast.Call] = {}
    mentions = []
    for sub in ast.walk(module):
        if isinstance(sub, ast.Call):
            callees[id(sub.func)] = sub
        elif isinstance(sub, ast.Name) and sub.id == cls or isinstance(sub, ast.Attribute) and sub.attr == cls:
            mentions.append(sub)
        elif isinstance(sub, ast.alias) and (sub.name == cls or sub.name.endswith("." + cls)) \
                and sub.asname not in (None, cls):
            return None
        elif isinstance(sub, ast.alias) and sub.asname == cls and sub.name != cls:
            return None
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == cls:
            return None
    calls = []
    for mention in mentions:
        call = callees.get(id(mention))
        if call is None or not isinstance(mention.ctx, ast.Load):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        calls.append(call)
    return calls


def _stores_by_name(module: ast.Module) -> bool:
    """The module may store any attribute of an object it holds: `setattr(obj, key, value)` with
    a name not written as a string (a config-override loop), or a write through `__dict__`."""
    for sub in ast.walk(module):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr" \
                and not (len(sub.args) > 1 and isinstance(sub.args[1], ast.Constant)):
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "__dict__":
            return True
    return False


def _argument(call: ast.Call, attr_param, default):
    position, name = attr_param
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and position < len(call.args):
        return call.args[position]
    return default


def _torch_aliases(module: Optional[ast.Module]) -> Set[str]:
    names: Set[str] = set()
    for stmt in module.body if module is not None else ():
        if isinstance(stmt, ast.Import):
            names.update(alias.asname or alias.name for alias in stmt.names if alias.name == "torch")
    return names


def _dtype(value, torch_names: Set[str]) -> Optional[str]:
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in torch_names:
        return _FLOATS.get(value.attr)
    return None
