"""Module instances whose `forward` parameters are bound at their call sites, for
amplint.analysis.facts.dtype_params: with `class PixelNorm(nn.Module)` whose only instance is
`self.norm = PixelNorm()` called as `self.norm(self.conv(x))`, `forward`'s `x` holds what that
call passes. Only where every way the file reaches `forward` is one of these calls:

- the class is a module-level `nn.Module` class of the file (bases `nn.Module`, `object` or such
  classes of the file), bound once, with one plain `forward` (no decorator, no `*args`/
  `**kwargs`, not async); no class of the file defines `__call__`;
- every mention of the class name is `self.<attr> = Cls(...)` (the attribute's only assignment
  in its class, in a class of the file), `net = Cls(...)` (moved: `.cuda()`, `.to(device)`;
  bound once, at module level) or `Cls(...)(...)`;
- every mention of a module-level `net` is that assignment, a call `net(...)` or a read that
  calls nothing (`net.parameters()`); each instance is called somewhere in the file;
- every mention of such an `<attr>` in the file is that assignment or a call `self.<attr>(...)`:
  passed on (`nn.Sequential(self.norm)`, `checkpoint(self.norm, x)`), hooked, or read as
  `self.norm.forward`, it leaves `forward` unbound; so does a string naming the class or the
  attribute (`__all__`, `getattr(self, "norm")`);
- no region the project puts around a function of the file names the class (a caller elsewhere).

Another file that imports the class and calls an instance outside any region is not seen: like
`_name` for private functions, the file's own uses are trusted to be all of them."""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

import libcst as cst

from amplint.analysis.facts.dtype_value import module_moved
from amplint.analysis.facts.tree import Frame, iter_nodes

# reads of a module-level instance that never call its forward (not `.cuda()`, `.train()`:
# they return the module, which may then be called unseen)
SAFE_READS = frozenset({"parameters", "named_parameters", "buffers", "state_dict",
                        "load_state_dict", "zero_grad"})
Forwards = Tuple[Dict[Tuple[int, str], Frame], Dict[str, Frame], Dict[str, Frame], Dict[int, int]]


def find_forwards(bindings) -> Forwards:
    """(id(owner class), attr) -> the forward its `self.<attr>(...)` calls reach; class name ->
    the forward `Cls(...)(...)` reaches; module-level instance name -> the forward `net(...)`
    reaches; id(forward frame) -> its call sites in the file."""
    facts = bindings.dtypes.facts
    module_frame = facts.tree.module_frame
    classes: Dict[str, Frame] = {}
    forwards: Dict[int, List[Frame]] = {}
    for frame in facts.tree.frames:
        if frame.kind == "class" and frame.parent is not None and frame.parent.scope is module_frame:
            classes[frame.node.name.value] = frame
        elif frame.kind == "function" and frame.parent is not None and frame.parent.scope.kind == "class":
            name = frame.node.name.value
            if name == "__call__":
                return {}, {}, {}, {}
            if name == "forward":
                forwards.setdefault(id(frame.parent.scope), []).append(frame)
    # only a class the file instantiates can be bound: the collector's calls say which, before
    # the file's nodes are read (issue 34)
    made = {site.dotted[0] for site in facts.tree.calls
            if site.dotted is not None and len(site.dotted) == 1 and site.dotted[0] in classes}
    candidates: Dict[str, Frame] = {}
    for name, cls in classes.items():
        if name not in made:
            continue
        methods = forwards.get(id(cls), ())
        if len(methods) == 1 and _plain(methods[0].node) and bindings._module_class(cls, set()):
            candidates[name] = methods[0]
    if not candidates:
        return {}, {}, {}, {}
    counts = bindings.dtypes.module_counts()
    entered = _entered(facts.entries)
    candidates = {name: forward for name, forward in candidates.items()
                  if counts.get(name) == 1 and name not in entered}
    if not candidates:
        return {}, {}, {}, {}

    # the attributes bound to an instance: `self.<attr> = Cls(...)`, once in its class
    instance_of: Dict[Tuple[int, str], str] = {}  # (id(owner), attr) -> class name
    ctor_calls: Dict[int, Tuple[int, str]] = {}  # id(Cls name node in the ctor) -> (owner, attr)
    for cls in classes.values():
        for attr, sites in facts.index.self_assigns(cls).items():
            value = sites[0].value
            if len(sites) == 1 and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                    and value.func.value in candidates and len(sites[0].targets) == 1:
                instance_of[(id(cls), attr)] = value.func.value
                ctor_calls[id(value.func)] = (id(cls), attr)
    # module-level instances: `net = Net().cuda()`, bound once in the module
    global_of: Dict[str, str] = {}  # name -> class name
    for site in facts.tree.assigns:
        if site.frame is not module_frame or len(site.targets) != 1 \
                or not isinstance(site.targets[0], cst.Name) or not isinstance(site.value, cst.Call):
            continue
        call = site.value
        while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
                and module_moved(call, module_frame):
            call = call.func.value
        name = site.targets[0].value
        if isinstance(call.func, cst.Name) and call.func.value in candidates \
                and counts.get(name) == 1 and name not in candidates:
            global_of[name] = call.func.value
            ctor_calls[id(call.func)] = (0, name)
    attrs = {attr for _, attr in instance_of}
    wanted = set(candidates) | attrs | set(global_of)
    global_sites: Dict[str, int] = {}
    global_reads: set = set()  # id(name node) read as `net.parameters()` and such
    global_targets = {id(site.targets[0]) for site in facts.tree.assigns
                      if site.frame is module_frame and len(site.targets) == 1}

    bad: set = set()  # class names and attributes used some other way
    direct_sites: Dict[str, int] = {}
    attr_sites: Dict[str, int] = {}
    inner_funcs: set = set()  # id(Cls name node) of `Cls(...)(...)`
    call_funcs: set = set()
    names: List[cst.Name] = []
    attributes: List[cst.Attribute] = []
    attr_names: set = set()
    for node in iter_nodes(facts.module):
        kind = type(node)
        if kind is cst.Call:
            call_funcs.add(id(node.func))
            inner = node.func
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) \
                    and inner.func.value in candidates:
                inner_funcs.add(id(inner.func))
        elif kind is cst.Name:
            if node.value in candidates or node.value in global_of:
                names.append(node)
        elif kind is cst.Attribute:
            if node.attr.value in attrs:
                attributes.append(node)
                attr_names.add(id(node.attr))
            if isinstance(node.value, cst.Name) and node.value.value in global_of \
                    and node.attr.value in SAFE_READS:
                global_reads.add(id(node.value))
        elif kind is cst.Global or kind is cst.Nonlocal:
            bad.update(item.name.value for item in node.names)
        elif kind is cst.SimpleString:
            text = node.value[1:-1] if len(node.value) >= 2 else node.value
            if text in wanted:
                bad.add(text)
    definitions = {id(classes[name].node.name) for name in candidates}
    for name in names:
        if id(name) in definitions or id(name) in attr_names:
            continue
        if name.value in global_of:
            if id(name) in call_funcs:
                global_sites[name.value] = global_sites.get(name.value, 0) + 1
            elif id(name) not in global_reads and id(name) not in global_targets:
                bad.add(name.value)
            continue
        if id(name) in inner_funcs:
            direct_sites[name.value] = direct_sites.get(name.value, 0) + 1
        elif id(name) not in ctor_calls:
            bad.add(name.value)
    targets = {id(site.targets[0]) for cls in classes.values()
               for attr, sites in facts.index.self_assigns(cls).items()
               if attr in attrs for site in sites}
    for attribute in attributes:
        attr = attribute.attr.value
        if id(attribute) in targets:
            continue
        if id(attribute) in call_funcs and isinstance(attribute.value, cst.Name) \
                and attribute.value.value == "self":
            attr_sites[attr] = attr_sites.get(attr, 0) + 1
        else:
            bad.add(attr)

    by_attr: Dict[Tuple[int, str], Frame] = {}
    by_class: Dict[str, Frame] = {}
    expected: Dict[int, int] = {}
    owners: Dict[str, int] = {}
    for (owner, attr), name in instance_of.items():
        owners[attr] = owners.get(attr, 0) + 1
    excluded = set(bad)
    for (owner, attr), name in instance_of.items():
        if attr in bad or owners[attr] != 1 or not attr_sites.get(attr):
            # an instance whose calls cannot all be counted, or that the file never calls
            # (another file does)
            excluded.add(name)
    for instance, name in global_of.items():
        if instance in bad or not global_sites.get(instance):
            excluded.add(name)
    by_name: Dict[str, Frame] = {}
    for (owner, attr), name in instance_of.items():
        if name in excluded:
            continue
        forward = candidates[name]
        by_attr[(owner, attr)] = forward
        expected[id(forward)] = expected.get(id(forward), 0) + attr_sites.get(attr, 0)
    for name, count in direct_sites.items():
        if name in excluded:
            continue
        by_class[name] = candidates[name]
        expected[id(candidates[name])] = expected.get(id(candidates[name]), 0) + count
    for instance, name in global_of.items():
        if name in excluded:
            continue
        by_name[instance] = candidates[name]
        forward = candidates[name]
        expected[id(forward)] = expected.get(id(forward), 0) + global_sites.get(instance, 0)
    return by_attr, by_class, by_name, {key: value for key, value in expected.items() if value}


def _entered(entries) -> set:
    """Every name an entry of the project pass mentions (a region or value another file gives
    a function or class here: some caller is elsewhere)."""
    found: set = set()
    for entry in entries:
        for value in vars(entry).values() if hasattr(entry, "__dict__") else ():
            for text in (value if isinstance(value, (tuple, list)) else (value,)):
                if isinstance(text, str):
                    found.update(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
    return found


def _plain(node: cst.FunctionDef) -> bool:
    params = node.params
    return not node.decorators and node.asynchronous is None and not isinstance(
        params.star_arg, cst.Param) and params.star_kwarg is None
